/**
 * SVG from DOT text, rendered offline (`renderSvg`) by Graphviz compiled to
 * WebAssembly, loaded on first use.
 */
import type { Viz } from '@viz-js/viz';

/** The Graphviz WebAssembly instance, loaded on first use (the CLI's other commands never pay for it). */
let viz: Promise<Viz> | undefined;

/**
 * Renders DOT text to SVG with Graphviz compiled to WebAssembly
 * (`@viz-js/viz`): no network, no native Graphviz needed.
 *
 * @throws Error carrying Graphviz's messages when the DOT does not render.
 */
export async function renderSvg(dot: string): Promise<string> {
  viz ??= import('@viz-js/viz').then((module) => module.instance());
  const result = (await viz).render(dot, { format: 'svg' });
  if (result.status !== 'success') {
    throw new Error(`Graphviz could not render the chart: ${result.errors.map((e) => e.message).join('; ')}`);
  }
  return result.output;
}
