/**
 * The hosts' codecs, and which one reads a payload.
 *
 * `pulse-safety hook <host>` names the host whose settings ran it, but a
 * settings file is read by more than one host: Claude Code's
 * `.claude/settings.json` also runs under VS Code agent mode, Copilot CLI
 * and Cursor, each with its own payloads and tool names. So the payload
 * decides: the declared host's codec when the payload is one of its own,
 * else the codec whose host sent it (AGENT_HOOKS.md §1.6, §4 item 4;
 * issue 25 item 4: "catalogs picked from the payload, not from which
 * settings file was read").
 */
import type { HookHost, HostCodec } from '../types.js';
import { claudeCodeCodec, matchesClaudeCode } from './claude-code.js';
import { codexCodec, matchesCodex } from './codex.js';
import { copilotCodec, matchesCopilot } from './copilot.js';
import { cursorCodec, matchesCursor } from './cursor.js';
import { geminiCliCodec, matchesGeminiCli } from './gemini-cli.js';

export {
  claudeCodeCodec,
  matchesClaudeCode,
  codexCodec,
  matchesCodex,
  copilotCodec,
  matchesCopilot,
  cursorCodec,
  matchesCursor,
  geminiCliCodec,
  matchesGeminiCli,
};

/** A codec with the check that tells its host's payloads from the others'. */
interface Detector {
  codec: HostCodec;
  matches: (payload: unknown) => boolean;
}

/** The order in which payloads are tried when the declared host's codec does not take them. */
const DETECTORS: readonly Detector[] = [
  { codec: claudeCodeCodec, matches: matchesClaudeCode },
  { codec: codexCodec, matches: matchesCodex },
  { codec: geminiCliCodec, matches: matchesGeminiCli },
  { codec: cursorCodec, matches: matchesCursor },
  { codec: copilotCodec, matches: matchesCopilot },
];

const BY_HOST: Readonly<Record<HookHost, Detector>> = {
  'claude-code': DETECTORS[0]!,
  codex: DETECTORS[1]!,
  'gemini-cli': DETECTORS[2]!,
  cursor: DETECTORS[3]!,
  copilot: DETECTORS[4]!,
};

/**
 * The codec of `host`.
 * @throws TypeError when `host` is not one of `HOOK_HOSTS` (a caller that
 *   read it from the command line checks it with `isHookHost` first).
 */
export function codecOf(host: HookHost): HostCodec {
  const detector = Object.hasOwn(BY_HOST, host) ? BY_HOST[host] : undefined;
  if (detector === undefined) throw new TypeError(`no hook codec for host '${String(host)}'`);
  return detector.codec;
}

/**
 * The codec that reads `payload` (the JSON a hook got on stdin, parsed):
 * the declared host's when its `matches` accepts the payload; else the first
 * codec whose `matches` does, in the order claude-code, codex, gemini-cli,
 * cursor, copilot; else the declared host's, whose `read` then says what is
 * wrong with the payload (a `HookPayloadError`). Never throws for a known
 * host, whatever the payload; a matcher that throws counts as no match.
 *
 * @throws TypeError when `declared` is not one of `HOOK_HOSTS`.
 */
export function codecForPayload(declared: HookHost, payload: unknown): HostCodec {
  const own = codecOf(declared);
  if (accepts(BY_HOST[declared], payload)) return own;
  for (const detector of DETECTORS) {
    if (detector.codec !== own && accepts(detector, payload)) return detector.codec;
  }
  return own;
}

function accepts(detector: Detector, payload: unknown): boolean {
  try {
    return detector.matches(payload);
  } catch {
    return false;
  }
}
