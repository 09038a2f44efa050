/**
 * Small DOM helpers of the visualizer page (browser code). Text is always set
 * as text, never parsed as HTML.
 */

type Child = Node | string | null | undefined | false;

/**
 * Creates an element: `h('button', { type: 'button', 'aria-label': 'Step back' }, 'Back')`.
 * Attributes with value `false`, `null` or `undefined` are left out; `true` sets an empty attribute.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number | boolean | null | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/** The element with this id. @throws Error when the page lacks it (a page bug). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Replaces an element's children. */
export function fill(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
}

/** Error of an API call: the server's `{ error }` message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Calls the server's JSON API (same origin).
 * @throws ApiError with the server's message on an HTTP error.
 */
export async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => ({}))) as { error?: string };
  if (!response.ok) throw new ApiError(response.status, json.error ?? `${response.status} ${response.statusText}`);
  return json as T;
}
