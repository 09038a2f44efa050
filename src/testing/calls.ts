/**
 * A path step's event as the session guard takes it: the tool call for
 * `check` and `record` (`toolCallOf`), and the options of `record` for a
 * self-verifying write (`recordOptionsOf`), so a loop replays a path
 * without knowing the machine's event shapes.
 */
import type { SafetyEvent, ToolKind } from '../../machines/safety.types.js';

/** The result a self-verifying write's outcome is replayed with (DESIGN.md §1). */
export const SELF_VERIFYING_RESULT = '{"verification":{"ok":true}}';

/**
 * The tool call of a tool event, as `check` and `record` take it
 * (`{ id, name, kind, args?, targets?, destructive?, links? }`; targets, the
 * destructive flag and links (issue 24) only when the event has them); null
 * for other events. An event's write key (issue 28) becomes the arguments
 * `{ writeKey }`: the guard computes its own key from them, the same for
 * every event with the same write key, and none for a call without them.
 */
export function toolCallOf(
  event: SafetyEvent,
): { id?: string; name: string; kind: ToolKind; args?: unknown; targets?: string[]; destructive?: boolean; links?: string[] } | null {
  if (event.type !== 'tool.requested' && event.type !== 'tool.succeeded' && event.type !== 'tool.failed') return null;
  const writeKey = event.type === 'tool.succeeded' ? undefined : event.writeKey;
  return {
    ...(event.callId === undefined ? {} : { id: event.callId }),
    ...(typeof writeKey === 'string' ? { args: { writeKey } } : {}),
    name: event.tool,
    kind: event.kind,
    ...(event.targets === undefined ? {} : { targets: [...event.targets] }),
    ...(event.destructive === true ? { destructive: true } : {}),
    ...(event.links === undefined ? {} : { links: [...event.links] }),
  };
}

/**
 * The third argument of `record` for a tool event: `{ result }` with a
 * self-verifying result (`SELF_VERIFYING_RESULT`) for a success marked
 * `selfVerified`; undefined otherwise.
 */
export function recordOptionsOf(event: SafetyEvent): { result: string } | undefined {
  return event.type === 'tool.succeeded' && event.selfVerified === true ? { result: SELF_VERIFYING_RESULT } : undefined;
}
