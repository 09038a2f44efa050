/**
 * The unknown-tools warning: a session guard whose first calls name no tool
 * of its catalog (the default Pulse catalog before an agent's own tools)
 * warns once, naming the fix, and decides exactly as it would without it.
 *
 * Spec: DESIGN.md §2 (a tool the catalog does not list is a write); issue 27 item 3.
 */
import { describe, expect, it } from 'vitest';
import {
  createSessionGuard,
  UNKNOWN_TOOLS_AFTER,
  type SessionGuard,
  type SessionGuardOptions,
  type SessionGuardWarning,
  type ToolCall,
} from '../../src/guard/session-guard.js';
import { compileCatalog, createCallClassifier } from '../../src/classify/catalog/index.js';
import { SessionGuardError } from '../../src/errors/index.js';

const T = 1_700_000_000_000;

/** A guard with a fixed clock whose warnings are collected. */
function watched(options: Omit<SessionGuardOptions, 'now' | 'onWarning'> = {}) {
  const warnings: SessionGuardWarning[] = [];
  const guard = createSessionGuard({ ...options, now: () => T, onWarning: (warning) => warnings.push(warning) });
  return { guard, warnings };
}

/** The user's own tools, none of them in the Pulse catalog. */
const ownCalls: ToolCall[] = [
  { id: 'c1', name: 'search_docs', args: { query: 'refund policy' } },
  { id: 'c2', name: 'read_ticket', args: { ticket: 'T-1' } },
  { id: 'c3', name: 'search_docs', args: { query: 'refunds' } },
  { id: 'c4', name: 'send_email', args: { to: 'a@example.com' } },
];

/** Checks each call and records the admitted ones; returns what each check decided. */
function drive(guard: SessionGuard, calls: readonly ToolCall[]): unknown[] {
  return calls.map((call) => {
    const decision = guard.check(call);
    if (decision.allowed) guard.record(call, 'success');
    return decision.allowed ? { allowed: true } : { allowed: false, rule: decision.error.rule, state: decision.error.state };
  });
}

describe('a guard whose first calls name no tool of its catalog', () => {
  it(`warns once, on the ${UNKNOWN_TOOLS_AFTER}rd call, naming the catalog, the tools and the fix`, () => {
    const { guard, warnings } = watched();
    drive(guard, ownCalls.slice(0, UNKNOWN_TOOLS_AFTER - 1));
    expect(warnings).toEqual([]);
    drive(guard, ownCalls.slice(UNKNOWN_TOOLS_AFTER - 1));
    expect(warnings).toHaveLength(1);
    const [warning] = warnings;
    expect(warning).toMatchObject({ code: 'UNKNOWN_TOOLS', catalog: 'pulse', tools: ['search_docs', 'read_ticket'] });
    expect(warning!.message).toContain("catalog 'pulse' (search_docs, read_ticket)");
    expect(warning!.message).toContain('calls that only read are refused too');
    expect(warning!.message).toContain(
      "createSessionGuard({ classify: createCallClassifier({ name: 'my-agent', tools: { search_docs: { kind: 'read' or 'write'",
    );
    // The fix it shows never declares a tool read for the user: a destructive tool copied from it stays a write.
    expect(warning!.message).not.toContain("search_docs: 'read'");
    expect(Object.isFrozen(warning)).toBe(true);
  });

  it('decides every call exactly as a guard that does not warn', () => {
    const silent = createSessionGuard({ now: () => T, onWarning: () => undefined });
    const { guard, warnings } = watched();
    expect(drive(guard, ownCalls)).toEqual(drive(silent, ownCalls));
    expect(warnings).toHaveLength(1);
    expect(guard.getPersistedSnapshot()).toEqual(silent.getPersistedSnapshot());
  });

  it('counts a call once: its check and its record', () => {
    const { guard, warnings } = watched();
    for (const call of ownCalls.slice(0, 2)) {
      guard.check(call);
      guard.record({ id: call.id, name: call.name }, 'success'); // classified again (no args object kept), same id
    }
    expect(warnings).toEqual([]);
    guard.check(ownCalls[2]!);
    expect(warnings).toHaveLength(1);
  });

  it('does not warn when one of the first calls names a listed tool, however many unknown ones follow', () => {
    const { guard, warnings } = watched();
    drive(guard, [ownCalls[0]!, { id: 'q', name: 'pulse_query' }, ...ownCalls.slice(1)]);
    drive(
      guard,
      ownCalls.map((call) => ({ ...call, id: `${call.id}-again` })),
    );
    expect(warnings).toEqual([]);
  });

  it('does not warn for a catalog that lists the tools, and warns naming a catalog that does not', () => {
    const tools = { search_docs: 'read', read_ticket: 'read', send_email: { kind: 'write', targets: { to: 'id' } } } as const;
    const declared = watched({ classify: createCallClassifier({ name: 'support', tools }) });
    drive(declared.guard, ownCalls);
    expect(declared.warnings).toEqual([]);

    const other = watched({ classify: compileCatalog({ name: 'other', tools: { lookup: 'read' } }).classify });
    drive(other.guard, ownCalls);
    expect(other.warnings.map((w) => w.catalog)).toEqual(['other']);
  });

  it('does not warn for a classifier of the caller own, nor for calls that state their kind', () => {
    const own = watched({ classify: (name) => (name.startsWith('read') || name.startsWith('search') ? 'read' : 'write') });
    drive(own.guard, ownCalls);
    expect(own.warnings).toEqual([]);

    const stated = watched();
    drive(
      stated.guard,
      ownCalls.map((call) => ({ ...call, kind: 'read' as const })),
    );
    expect(stated.warnings).toEqual([]);
  });

  it('ignores what onWarning throws, and refuses a call back from it, without changing a decision', () => {
    let reentered: unknown = null;
    const guard: SessionGuard = createSessionGuard({
      now: () => T,
      onWarning: () => {
        try {
          guard.check({ id: 'x', name: 'search_docs' });
        } catch (error) {
          reentered = error;
        }
        throw new Error('a broken warning handler');
      },
    });
    const silent = createSessionGuard({ now: () => T, onWarning: () => undefined });
    expect(drive(guard, ownCalls)).toEqual(drive(silent, ownCalls));
    expect(reentered).toBeInstanceOf(SessionGuardError);
    expect((reentered as SessionGuardError).code).toBe('GUARD_REENTRANT');
  });

  it('by default emits one process warning per catalog, however many guards warn', async () => {
    const seen: Error[] = [];
    const listen = (warning: Error) => {
      if (warning.name === 'PulseSafetyWarning') seen.push(warning);
    };
    process.on('warning', listen);
    try {
      const classify = createCallClassifier({ name: 'unknown-tools-default-test', tools: { lookup: 'read' } });
      for (let i = 0; i < 3; i++) drive(createSessionGuard({ now: () => T, classify }), ownCalls);
      await new Promise((resolve) => setImmediate(resolve)); // Node emits 'warning' on the next tick
    } finally {
      process.off('warning', listen);
    }
    expect(seen).toHaveLength(1);
    expect((seen[0] as Error & { code?: string }).code).toBe('PULSE_SAFETY_UNKNOWN_TOOLS');
    expect(seen[0]!.message).toContain("catalog 'unknown-tools-default-test'");
  });

  it('rejects an onWarning that is not a function', () => {
    expect(() => createSessionGuard({ onWarning: 'log' as never })).toThrow('options.onWarning must be a function when given');
  });
});
