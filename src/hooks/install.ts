/**
 * `pulse-safety hook install|uninstall`: the hosts' settings files, and the
 * edits that add or remove our hook entries there.
 *
 * The edits are pure (`installHookSettings`, `uninstallHookSettings`: text in,
 * text out) and made with jsonc-parser's `modify`, so a settings file keeps
 * its comments, its formatting and everything that is not ours; installing
 * twice changes nothing; uninstalling removes exactly our entries (those whose
 * command is ours: `isOurHookCommand`), and the containers that held only
 * them. The file I/O (`readSettingsFile`, `writeSettingsFile`) is separate.
 *
 * Each host's file and shape follow AGENT_HOOKS.md §1.1-1.5 and issue 25 item 6;
 * Claude Code's `onFailure` was read from the schema of the installed 2.1.332
 * binary ("'block': the failure counts as exit code 2 ... Ignored ... on Stop,
 * SubagentStop").
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../util/atomic-write.js';
import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parse,
  parseTree,
  printParseErrorCode,
  type FormattingOptions,
  type ParseError,
} from 'jsonc-parser';
import type { HookHost } from './types.js';

/** Where a hook is installed: the project's settings (shared through the repository) or the user's (every project). */
export const HOOK_SCOPES = ['project', 'user'] as const;

/** One of `HOOK_SCOPES`. */
export type HookScope = (typeof HOOK_SCOPES)[number];

/**
 * How long a host waits for one hook process before it gives up, per host in
 * the host's own unit: well over our session lock's wait (5 s, `runHook`'s
 * `lockTimeoutMs`) plus a cold start (2-3 s on a loaded machine, AGENT_HOOKS.md §3),
 * so a hook that waited for its lock still answers, even on a machine so
 * loaded that one hook took 96 s (measured on 2 cores at load 36): Gemini CLI,
 * Codex and Copilot CLI let the call through when a hook times out, so a
 * short timeout is a way around the gate. Well under the hosts' defaults
 * (600 s in Claude Code and Codex), so a hung hook does not stall the agent
 * for ten minutes. 120 s in every host.
 */
export const HOOK_TIMEOUT_SECONDS = 120;

/** An event the install writes for a host: its name, its matcher (tool events), and whether a failure of the hook refuses the action. */
interface HookEventSpec {
  readonly event: string;
  readonly matcher?: string;
  readonly failClosed?: boolean;
}

/**
 * A host's settings layout:
 * - `grouped`: `hooks.<Event>` is a list of `{ matcher?, hooks: [entry] }`
 *   groups (Claude Code, Gemini CLI, Codex);
 * - `flat`: `hooks.<event>` is a list of entries, and the file has
 *   `version: 1` (Cursor, Copilot CLI).
 */
interface HostLayout {
  readonly shape: 'grouped' | 'flat';
  readonly events: readonly HookEventSpec[];
  /** The field of an entry that holds the command. */
  readonly commandField: 'command' | 'bash';
  /** Our entry for an event, with the command. */
  entry(command: string, spec: HookEventSpec): Record<string, unknown>;
  /** True when the file is ours alone (Copilot's `.github/hooks/pulse-safety.json`): uninstall removes it when nothing else is left. */
  readonly ownFile: boolean;
}

const LAYOUTS: Record<HookHost, HostLayout> = {
  'claude-code': {
    shape: 'grouped',
    commandField: 'command',
    ownFile: false,
    events: [
      { event: 'PreToolUse', matcher: '*', failClosed: true },
      { event: 'PostToolUse', matcher: '*' },
      { event: 'PostToolUseFailure', matcher: '*' },
      { event: 'Stop' },
      { event: 'SubagentStop' },
      { event: 'SessionStart' },
      { event: 'SessionEnd' },
    ],
    // onFailure only where it refuses something: before a tool. On Stop and SubagentStop Claude Code ignores it;
    // after a tool, a failed hook leaves the write unrecorded, and the session's own state refuses the next write.
    // A daemon's URL (`hook install claude-code --daemon <port>`) is written as an http hook.
    entry: (command, spec) => ({
      ...(isOurHookUrl(command, 'claude-code') ? { type: 'http', url: command } : { type: 'command', command }),
      timeout: HOOK_TIMEOUT_SECONDS,
      ...(spec.failClosed === true ? { onFailure: 'block' } : {}),
    }),
  },
  'gemini-cli': {
    shape: 'grouped',
    commandField: 'command',
    ownFile: false,
    events: [
      { event: 'BeforeTool', matcher: '*' },
      { event: 'AfterTool', matcher: '*' },
      { event: 'AfterAgent' },
      { event: 'SessionStart' },
      { event: 'SessionEnd' },
    ],
    // Gemini CLI's timeout is in milliseconds.
    entry: (command) => ({ name: 'pulse-safety', type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS * 1000 }),
  },
  codex: {
    shape: 'grouped',
    commandField: 'command',
    ownFile: false,
    // No matcher: Codex matches every tool when it is omitted; "*" is not a valid regex there.
    events: [{ event: 'PreToolUse' }, { event: 'PostToolUse' }, { event: 'Stop' }, { event: 'SessionStart' }],
    entry: (command) => ({ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS }),
  },
  cursor: {
    shape: 'flat',
    commandField: 'command',
    ownFile: false,
    events: [
      'preToolUse',
      'postToolUse',
      'postToolUseFailure',
      'beforeShellExecution',
      'afterShellExecution',
      'beforeMCPExecution',
      'afterMCPExecution',
      'beforeReadFile',
      'afterFileEdit',
      'stop',
      'sessionStart',
      'sessionEnd',
    ].map((event) => ({ event, failClosed: true })),
    entry: (command) => ({ command, type: 'command', timeout: HOOK_TIMEOUT_SECONDS, failClosed: true }),
  },
  copilot: {
    shape: 'flat',
    commandField: 'bash',
    ownFile: true,
    events: ['preToolUse', 'postToolUse', 'postToolUseFailure', 'agentStop', 'subagentStop', 'sessionStart', 'sessionEnd'].map((event) => ({
      event,
    })),
    entry: (command) => ({ type: 'command', bash: command, timeoutSec: HOOK_TIMEOUT_SECONDS }),
  },
};

/** The events `install` writes for `host`, in the host's own names, in order. */
export function hookEventsOf(host: HookHost): string[] {
  return LAYOUTS[host].events.map((spec) => spec.event);
}

/** Where the user's and the project's settings are, for `hookSettingsFile`. */
export interface HookLocation {
  /** The project's directory (absolute); used for the project scope. */
  projectDir: string;
  /** The environment: `HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `COPILOT_HOME`; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The settings file `install` writes for `host` at `scope` (absolute):
 * - Claude Code: `.claude/settings.json`; user `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR`);
 * - Gemini CLI: `.gemini/settings.json`; user `~/.gemini/settings.json`;
 * - Codex: `.codex/hooks.json`; user `~/.codex/hooks.json` (`$CODEX_HOME`);
 * - Cursor: `.cursor/hooks.json`; user `~/.cursor/hooks.json`;
 * - Copilot CLI: `.github/hooks/pulse-safety.json`; user `~/.copilot/hooks/pulse-safety.json` (`$COPILOT_HOME`).
 */
export function hookSettingsFile(host: HookHost, scope: HookScope, location: HookLocation): string {
  const env = location.env ?? process.env;
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  const fromEnv = (name: string, fallback: string): string => {
    const value = env[name];
    return value !== undefined && value !== '' && isAbsolute(value) ? value : fallback;
  };
  const project = resolve(location.projectDir);
  switch (host) {
    case 'claude-code':
      return scope === 'project'
        ? join(project, '.claude', 'settings.json')
        : join(fromEnv('CLAUDE_CONFIG_DIR', join(home, '.claude')), 'settings.json');
    case 'gemini-cli':
      return join(scope === 'project' ? project : home, '.gemini', 'settings.json');
    case 'codex':
      return scope === 'project' ? join(project, '.codex', 'hooks.json') : join(fromEnv('CODEX_HOME', join(home, '.codex')), 'hooks.json');
    case 'cursor':
      return join(scope === 'project' ? project : home, '.cursor', 'hooks.json');
    case 'copilot':
      return scope === 'project'
        ? join(project, '.github', 'hooks', 'pulse-safety.json')
        : join(fromEnv('COPILOT_HOME', join(home, '.copilot')), 'hooks', 'pulse-safety.json');
  }
}

/**
 * True when `command` is a hook command of ours for `host`: `also` itself
 * (a `--command` the user gave), or a command that names `pulse-safety`
 * (the executable, `pulse-safety-fsm`'s `bin.js`) or runs a `dist/src/bin.js`
 * (a checkout of this package), and ends in `hook <host>`.
 */
export function isOurHookCommand(command: unknown, host: HookHost, also?: string): boolean {
  if (typeof command !== 'string') return false;
  if (also !== undefined && command.trim() === also.trim()) return true;
  return /pulse-safety|dist\/src\/bin\.js['"]?\s/.test(command) && new RegExp(`(^|\\s)hook\\s+${host}\\s*$`).test(command);
}

/** True when `url` is the hook daemon's route for `host` (`http://127.0.0.1:<port>/hook/<host>`, `pulse-safety hook serve`). */
export function isOurHookUrl(url: unknown, host: HookHost): boolean {
  return typeof url === 'string' && new RegExp(`^http://127\\.0\\.0\\.1:\\d+/hook/${host}$`).test(url.trim());
}

/** A settings file that cannot be edited safely: not JSON (with comments), or not an object where one is needed. */
export class HookSettingsError extends Error {
  override readonly name = 'HookSettingsError';
  readonly file: string;
  constructor(file: string, message: string) {
    super(`${file}: ${message}`);
    this.file = file;
  }
}

/** The result of an edit: the new text (null: remove the file), whether it differs, and the events touched. */
export interface HookSettingsEdit {
  text: string | null;
  changed: boolean;
  /** The host's event names whose entries were added, updated (install) or removed (uninstall). */
  events: string[];
}

type Json = unknown;

/** Parses JSON with comments and trailing commas. @throws HookSettingsError when it does not parse or the root is not an object. */
function parseSettings(text: string, file: string): Record<string, Json> {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const first = errors[0]!;
    const line = text.slice(0, first.offset).split('\n').length;
    throw new HookSettingsError(
      file,
      `not valid JSON (${printParseErrorCode(first.error)} on line ${line}); fix or move it, then install again`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HookSettingsError(file, 'its top level is not a JSON object');
  return value as Record<string, Json>;
}

/** The file's indentation and line ending, so inserted text looks like the rest (two spaces when the file gives no hint). */
function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  if (indent?.startsWith('\t') === true) return { insertSpaces: false, tabSize: 1, eol };
  return { insertSpaces: true, tabSize: indent === undefined ? 2 : indent.length, eol };
}

function isObject(value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep equality of JSON values (key order ignored). */
function sameJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && sameJson(a[key], b[key]))
  );
}

/** Applies one `modify` to `text`. */
function edit(text: string, path: (string | number)[], value: Json, options: { formatting: FormattingOptions; insert?: boolean }): string {
  return applyEdits(text, modify(text, path, value, { formattingOptions: options.formatting, isArrayInsertion: options.insert ?? false }));
}

/** Where our entries are in an event's list: `[groupIndex, entryIndex]` (grouped) or `[entryIndex]` (flat). */
function ourEntries(list: Json[], layout: HostLayout, host: HookHost, also: string | undefined): number[][] {
  const found: number[][] = [];
  list.forEach((item, i) => {
    if (!isObject(item)) return;
    if (layout.shape === 'flat') {
      if (isOurHookCommand(item[layout.commandField], host, also)) found.push([i]);
      return;
    }
    const entries = item.hooks;
    if (!Array.isArray(entries)) return;
    entries.forEach((entry, j) => {
      if (isObject(entry) && (isOurHookCommand(entry[layout.commandField], host, also) || isOurHookUrl(entry.url, host)))
        found.push([i, j]);
    });
  });
  return found;
}

/** The text an absent or empty settings file stands for. */
function emptySettings(layout: HostLayout): string {
  return layout.shape === 'flat' ? '{\n  "version": 1\n}\n' : '{}\n';
}

/**
 * Adds our hook entries for `host` to a settings file's text (null or blank:
 * a new file), one per event in `hookEventsOf(host)`, each running `command`.
 * An entry of ours already there with the same fields is kept as it is; one
 * with another command or fields (an older install) is updated in place; a
 * second one of ours for the same event is removed. Everything else (the
 * user's hooks, other settings, comments, formatting) is kept.
 *
 * @param file the file's path, for error messages.
 * @throws HookSettingsError when the text is not JSON (comments and trailing
 *   commas are accepted), or `hooks` or an event's value has a shape the host
 *   would not read (then we do not guess).
 */
export function installHookSettings(host: HookHost, text: string | null, command: string, file: string): HookSettingsEdit {
  const layout = LAYOUTS[host];
  const original = text ?? '';
  let next = original.trim() === '' ? emptySettings(layout) : original;
  const formatting = formattingOf(next);
  let root = parseSettings(next, file);
  if (layout.shape === 'flat' && root.version === undefined) {
    next = addProperty(next, [], { key: 'version', value: 1 }, formatting);
    root = parseSettings(next, file);
  }
  if (root.hooks !== undefined && !isObject(root.hooks)) throw new HookSettingsError(file, "'hooks' is not an object");
  const events: string[] = [];
  for (const spec of layout.events) {
    const entry = layout.entry(command, spec);
    const hooks = parseSettings(next, file).hooks as Record<string, Json> | undefined;
    const list = hooks?.[spec.event];
    if (list !== undefined && !Array.isArray(list)) throw new HookSettingsError(file, `'hooks.${spec.event}' is not a list`);
    const found = list === undefined ? [] : ourEntries(list, layout, host, command);
    const before = next;
    if (found.length === 0) {
      const item = layout.shape === 'flat' ? entry : { ...(spec.matcher === undefined ? {} : { matcher: spec.matcher }), hooks: [entry] };
      next =
        list === undefined
          ? addProperty(next, ['hooks'], { key: spec.event, value: [item] }, formatting)
          : appendToList(next, ['hooks', spec.event], item, formatting);
    } else {
      // Extra entries of ours go first (from the last, so the indexes hold), then the first one is brought up to date.
      for (const at of found.slice(1).reverse()) next = removeEntry(next, ['hooks', spec.event], at, layout);
      const at = found[0]!;
      const path = layout.shape === 'flat' ? ['hooks', spec.event, at[0]!] : ['hooks', spec.event, at[0]!, 'hooks', at[1]!];
      const current = valueAt(parseSettings(next, file), path);
      if (!sameJson(current, entry)) next = replaceValue(next, path, entry, formatting);
    }
    if (next !== before) events.push(spec.event);
  }
  return { text: next, changed: next !== original, events };
}

/**
 * Appends `item` to the non-empty list at `path`, written after its last
 * element in that element's indentation (or on its line, for a list on one
 * line), touching nothing else: jsonc-parser's own insertion reformats the
 * list, the user's entries and comments with it. Uninstalling takes out
 * exactly the text added here.
 */
function appendToList(text: string, path: string[], item: Json, formatting: FormattingOptions): string {
  const list = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, path);
  const last = list?.children?.at(-1);
  if (list === undefined || last === undefined) return edit(text, [...path, 0], item, { formatting, insert: true });
  const end = last.offset + last.length;
  const lineStart = text.lastIndexOf('\n', last.offset) + 1;
  const lead = text.slice(lineStart, last.offset);
  if (!/^[ \t]*$/.test(lead) || !text.slice(list.offset, last.offset).includes('\n')) {
    return `${text.slice(0, end)}, ${JSON.stringify(item)}${text.slice(end)}`;
  }
  const unit = formatting.insertSpaces === false ? '\t' : ' '.repeat(formatting.tabSize ?? 2);
  const eol = formatting.eol ?? '\n';
  const body = JSON.stringify(item, null, unit).split('\n').join(`${eol}${lead}`);
  return `${text.slice(0, end)},${eol}${lead}${body}${text.slice(end)}`;
}

/** The value at `path` in `root`. */
function valueAt(root: Json, path: (string | number)[]): Json {
  let value: Json = root;
  for (const key of path) {
    if (Array.isArray(value) && typeof key === 'number') value = value[key];
    else if (isObject(value) && typeof key === 'string') value = value[key];
    else return undefined;
  }
  return value;
}

/** The indentation unit and line ending of `formatting`. */
function unitOf(formatting: FormattingOptions): { unit: string; eol: string } {
  return { unit: formatting.insertSpaces === false ? '\t' : ' '.repeat(formatting.tabSize ?? 2), eol: formatting.eol ?? '\n' };
}

/** The whitespace before `offset` on its line, or null when something else comes first on that line. */
function leadOf(text: string, offset: number): string | null {
  const lead = text.slice(text.lastIndexOf('\n', offset - 1) + 1, offset);
  return /^[ \t]*$/.test(lead) ? lead : null;
}

/**
 * Adds `"key": value` as the last property of the object at `path` (creating
 * the path's missing objects, from the nearest one that exists), in the
 * indentation of the property before it, touching nothing else (jsonc-parser's
 * own insertion reformats the property before it).
 */
function addProperty(text: string, path: string[], property: { key: string; value: Json }, formatting: FormattingOptions): string {
  const { key, value } = property;
  const tree = parseTree(text, [], { allowTrailingComma: true })!;
  const object = path.length === 0 ? tree : findNodeAtLocation(tree, path);
  if (object === undefined) {
    // The parent is missing: add it to its own parent, holding the new property.
    return addProperty(text, path.slice(0, -1), { key: path.at(-1)!, value: { [key]: value } }, formatting);
  }
  const last = object.children?.at(-1);
  if (last === undefined) return edit(text, [...path, key], value, { formatting });
  const end = last.offset + last.length;
  const lead = leadOf(text, last.offset);
  const { unit, eol } = unitOf(formatting);
  if (lead === null) return `${text.slice(0, end)}, ${JSON.stringify(key)}: ${JSON.stringify(value)}${text.slice(end)}`;
  const body = JSON.stringify(value, null, unit).split('\n').join(`${eol}${lead}`);
  return `${text.slice(0, end)},${eol}${lead}${JSON.stringify(key)}: ${body}${text.slice(end)}`;
}

/** Replaces the value at `path`, written in the indentation of its line (or on one line where it shares its line), touching nothing else. */
function replaceValue(text: string, path: (string | number)[], value: Json, formatting: FormattingOptions): string {
  const node = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, path);
  if (node === undefined) return edit(text, path, value, { formatting });
  const lineStart = text.lastIndexOf('\n', node.offset - 1) + 1;
  const lead = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const { unit, eol } = unitOf(formatting);
  const oneLine = !text.slice(node.offset, node.offset + node.length).includes('\n');
  const body = oneLine ? JSON.stringify(value) : JSON.stringify(value, null, unit).split('\n').join(`${eol}${lead}`);
  return `${text.slice(0, node.offset)}${body}${text.slice(node.offset + node.length)}`;
}

/** Takes the property `key` out of the object at `path`, with the comma and space that separate it from its neighbour, touching nothing else. */
function removeProperty(text: string, path: string[], key: string): string {
  const tree = parseTree(text, [], { allowTrailingComma: true })!;
  const object = path.length === 0 ? tree : findNodeAtLocation(tree, path);
  const properties = object?.children ?? [];
  const index = properties.findIndex((p) => p.children?.[0]?.value === key);
  const property = properties[index];
  if (object === undefined || property === undefined) return text;
  const end = property.offset + property.length;
  if (properties.length === 1) return `${text.slice(0, object.offset + 1)}${text.slice(object.offset + object.length - 1)}`;
  if (index === properties.length - 1) {
    const previous = properties[index - 1]!;
    return `${text.slice(0, previous.offset + previous.length)}${text.slice(end)}`;
  }
  return `${text.slice(0, property.offset)}${text.slice(properties[index + 1]!.offset)}`;
}

/**
 * Takes element `index` out of the list at `path`, with the comma and the
 * space that separate it from its neighbour, touching nothing else (the text
 * `appendToList` added, for our last entry). An only element leaves `[]`.
 */
function removeFromList(text: string, path: (string | number)[], index: number): string {
  const list = findNodeAtLocation(parseTree(text, [], { allowTrailingComma: true })!, path);
  const items = list?.children ?? [];
  const item = items[index];
  if (list === undefined || item === undefined) return text;
  const end = item.offset + item.length;
  if (items.length === 1) return `${text.slice(0, list.offset + 1)}${text.slice(list.offset + list.length - 1)}`;
  if (index === items.length - 1) {
    const previous = items[index - 1]!;
    return `${text.slice(0, previous.offset + previous.length)}${text.slice(end)}`;
  }
  return `${text.slice(0, item.offset)}${text.slice(items[index + 1]!.offset)}`;
}

/** Removes one entry of ours (at `[group, entry]` or `[entry]` under `listPath`), and its group when the group held nothing else. */
function removeEntry(text: string, listPath: string[], at: number[], layout: HostLayout): string {
  if (layout.shape === 'flat') return removeFromList(text, listPath, at[0]!);
  const group = valueAt(parse(text, [], { allowTrailingComma: true }), [...listPath, at[0]!]);
  const entries = isObject(group) && Array.isArray(group.hooks) ? group.hooks : [];
  if (entries.length <= 1) return removeFromList(text, listPath, at[0]!);
  return removeFromList(text, [...listPath, at[0]!, 'hooks'], at[1]!);
}

/**
 * Removes our hook entries for `host` from a settings file's text, under
 * every event (also events an older install wrote): entries whose command is
 * ours (`isOurHookCommand`, or `also`), the groups and event lists that held
 * only them, and `hooks` when nothing is left in it. When what is left is
 * what an absent file stands for (`{}`, or `{ "version": 1 }` for Cursor and
 * Copilot) and `text` was not already that, the result is `text: null`:
 * remove the file.
 *
 * @throws HookSettingsError when the text is not JSON (comments accepted).
 */
export function uninstallHookSettings(host: HookHost, text: string | null, file: string, also?: string): HookSettingsEdit {
  const layout = LAYOUTS[host];
  if (text === null || text.trim() === '') return { text, changed: false, events: [] };
  let next = text;
  const root = parseSettings(text, file);
  const events: string[] = [];
  if (isObject(root.hooks)) {
    for (const [event, list] of Object.entries(root.hooks)) {
      if (!Array.isArray(list)) continue;
      const found = ourEntries(list, layout, host, also);
      if (found.length === 0) continue;
      for (const at of [...found].reverse()) next = removeEntry(next, ['hooks', event], at, layout);
      const left = valueAt(parseSettings(next, file), ['hooks', event]);
      if (Array.isArray(left) && left.length === 0) next = removeProperty(next, ['hooks'], event);
      events.push(event);
    }
    const hooks = parseSettings(next, file).hooks;
    if (events.length > 0 && isObject(hooks) && Object.keys(hooks).length === 0) next = removeProperty(next, [], 'hooks');
  }
  if (next === text) return { text, changed: false, events: [] };
  const empty = parseSettings(emptySettings(layout), file);
  if (sameJson(parseSettings(next, file), empty) || (layout.ownFile && sameJson(parseSettings(next, file), {}))) {
    return { text: null, changed: true, events };
  }
  return { text: next, changed: true, events };
}

/** One installed hook of ours: the event, the command as written, and the entry's fields. */
export interface InstalledHook {
  event: string;
  command: string;
  entry: Record<string, unknown>;
}

/**
 * Our hook entries for `host` in a settings file's text, in file order (what
 * `verify` runs).
 * @throws HookSettingsError when the text is not JSON (comments accepted).
 */
export function installedHooks(host: HookHost, text: string | null, file: string, also?: string): InstalledHook[] {
  if (text === null || text.trim() === '') return [];
  const layout = LAYOUTS[host];
  const root = parseSettings(text, file);
  if (!isObject(root.hooks)) return [];
  const found: InstalledHook[] = [];
  for (const [event, list] of Object.entries(root.hooks)) {
    if (!Array.isArray(list)) continue;
    for (const at of ourEntries(list, layout, host, also)) {
      const entry = (layout.shape === 'flat' ? list[at[0]!] : (list[at[0]!] as { hooks: Json[] }).hooks[at[1]!]) as Record<string, unknown>;
      found.push({ event, command: (entry[layout.commandField] ?? entry.url) as string, entry });
    }
  }
  return found;
}

/** Reads a settings file: its text, or null when it does not exist. @throws the file system's error otherwise. */
export function readSettingsFile(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Writes a settings file atomically (a temporary file renamed over it, so the
 * host never reads half a file), creating its directory; `null` removes it.
 * An existing file keeps its mode; a new one is made 0644, as the hosts' own are.
 * @throws the file system's error.
 */
export async function writeSettingsFile(file: string, text: string | null): Promise<void> {
  if (text === null) {
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(dirname(file), { recursive: true });
  let mode = 0o644;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  await writeFileAtomic(file, text, mode);
}

/** Single-quotes a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** How a default hook command was chosen (`defaultHookCommand`). */
export interface HookCommandChoice {
  command: string;
  /** `project-bin`: the project's own `node_modules/.bin/pulse-safety`; `npx`: `npx --no-install`; `absolute`: this `node` and this package's `bin.js`. */
  how: 'project-bin' | 'npx' | 'absolute';
  /** One sentence: why this one. */
  why: string;
}

/** What `defaultHookCommand` needs to know about this process. */
export interface HookCommandContext {
  /** The project's directory (absolute). */
  projectDir: string;
  /** The running `node` (default `process.execPath`). */
  execPath?: string;
  /** This package's executable, `dist/src/bin.js` (default: found beside this module). */
  binPath?: string;
}

/** This package's `dist/src/bin.js`, from this module's place (`dist/src/hooks/install.js`, or `src/hooks/install.ts` run from the sources). */
function ownBinPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, '..', 'bin.js');
  return existsSync(beside) ? resolve(beside) : resolve(here, '..', '..', 'dist', 'src', 'bin.js');
}

/**
 * The hook command `install` writes when none is given:
 * - project scope, and the project has `pulse-safety-fsm` in its
 *   `node_modules`: the project's own executable, so the settings work for
 *   everyone who clones the project and installs its packages. Claude Code
 *   and Gemini CLI name the project's directory in the command
 *   (`"$CLAUDE_PROJECT_DIR"`, `$GEMINI_PROJECT_DIR`), Cursor runs project
 *   hooks from the project's root (`./node_modules/.bin/`); Codex and Copilot
 *   run hooks in the session's directory, which may be below the root, so
 *   they get `npx --no-install pulse-safety`, which finds it from there (and
 *   costs a second Node process per tool call: npm's);
 * - otherwise (user scope, or a project without the package, as after
 *   `npx pulse-safety hook install`): this `node` and this package's
 *   `bin.js`, absolute, so the hook does not depend on the hook's directory
 *   or `PATH`.
 */
export function defaultHookCommand(host: HookHost, scope: HookScope, context: HookCommandContext): HookCommandChoice {
  const project = resolve(context.projectDir);
  const local = existsSync(join(project, 'node_modules', 'pulse-safety-fsm', 'package.json'));
  if (scope === 'project' && local) {
    const why = "the project has pulse-safety-fsm in node_modules: the command names the project's own copy, so it works in every clone";
    switch (host) {
      case 'claude-code':
        return { command: `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/pulse-safety hook ${host}`, how: 'project-bin', why };
      case 'gemini-cli':
        return { command: `$GEMINI_PROJECT_DIR/node_modules/.bin/pulse-safety hook ${host}`, how: 'project-bin', why };
      case 'cursor':
        return { command: `./node_modules/.bin/pulse-safety hook ${host}`, how: 'project-bin', why };
      case 'codex':
      case 'copilot':
        return {
          command: `npx --no-install pulse-safety hook ${host}`,
          how: 'npx',
          why: `${why}; ${host} runs hooks in the session's directory, and npx finds the project's copy from any directory in it`,
        };
    }
  }
  const node = context.execPath ?? process.execPath;
  const bin = context.binPath ?? ownBinPath();
  return {
    command: `${shellQuote(node)} ${shellQuote(bin)} hook ${host}`,
    how: 'absolute',
    why:
      scope === 'user'
        ? 'a user-wide hook runs in every project: it names this node and this copy of pulse-safety-fsm by their absolute paths'
        : 'the project has no pulse-safety-fsm in node_modules: the command names this node and this copy of pulse-safety-fsm by their absolute paths (install the package in the project and install again for a command that works in every clone)',
  };
}

/**
 * The step the user must take after `install` before the host runs the hook
 * (AGENT_HOOKS.md §1.1-1.5): trust, review or enablement.
 */
export function hookFollowUp(host: HookHost, scope: HookScope): string {
  switch (host) {
    case 'claude-code':
      return scope === 'project'
        ? 'Claude Code runs project hooks only in a trusted workspace: start `claude` in the project, accept the trust dialog, and review the hooks in `/hooks`. A running session picks up changed hooks after a review in `/hooks` or a restart.'
        : 'Claude Code reads user hooks at start: restart running sessions, or review them in `/hooks`.';
    case 'gemini-cli':
      return scope === 'project'
        ? 'Gemini CLI fingerprints project hooks: at the next start it asks about the new hooks; accept them (a changed command asks again). Check with `/hooks`.'
        : 'Gemini CLI reads user hooks at start: restart running sessions; check with `/hooks`.';
    case 'codex':
      return 'Codex runs a hook only after it is trusted by its hash: open `/hooks` in Codex and trust the pulse-safety hooks (or run `codex --dangerously-bypass-hook-trust` in automation). A changed command must be trusted again.';
    case 'cursor':
      return scope === 'project'
        ? 'Cursor runs project hooks only in a trusted workspace: trust the workspace; Cursor reloads hooks.json by itself (check in Settings, Hooks).'
        : 'Cursor reloads ~/.cursor/hooks.json by itself; check the hooks in Settings, Hooks.';
    case 'copilot':
      return scope === 'project'
        ? 'Copilot CLI reads .github/hooks/*.json from the repository (the cloud agent too, once committed): restart running sessions; `disableAllHooks` must not be set.'
        : 'Copilot CLI reads ~/.copilot/hooks/*.json at start: restart running sessions.';
  }
}
