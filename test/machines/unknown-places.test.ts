/**
 * Issue 24 in the safety statechart, driven directly as an actor: a write
 * naming an unknown place (`?/<hint>`) is refused `unknown-target` unless a
 * user input succeeded since the last write; unknown places are never
 * established nor verification targets; named places with `<kind>:*`; links
 * that lead out of their directory make later targets unknown places; and
 * the snapshot round trip of all of it.
 *
 * Spec: DESIGN.md §5.3, §5.4, §5.6; issue 24.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { safetyMachine } from '../../machines/safety.machine.js';
import {
  CLEARED_BY,
  LINKS_OVERFLOW,
  MAX_LINKS,
  TOOL_BLOCK_REASONS,
  UNKNOWN_PLACE_REASON,
  clearedByFor,
  reasonWithTarget,
} from '../../machines/safety.policy.js';
import { UNKNOWN_PLACE, unknownPlace } from '../../machines/safety.targets.js';
import * as classification from '../../src/classify/classification.js';
import type { SafetyEvent, SafetyInput, ToolKind } from '../../machines/safety.types.js';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { parsePersistedSnapshot, toPersistedSnapshot } from '../../src/guard/snapshot.js';
import { FSMBlockedError } from '../../src/errors/index.js';
import { refusalText } from '../../src/guard/refusal-text.js';
import { start, type Session } from '../support/safety-session.js';

const T = 1_700_000_000_000;
const PLACE = unknownPlace('$DIR/');

interface Extra {
  targets?: string[];
  links?: string[];
  destructive?: boolean;
}

let ids = 0;
const ev = (type: SafetyEvent['type'], tool: string, kind: ToolKind, callId: string, extra: Extra): SafetyEvent =>
  ({ type, tool, kind, at: T, callId, ...extra }) as SafetyEvent;

/** Check a call and record its success under a fresh id. */
function run(s: Session, tool: string, kind: ToolKind, extra: Extra = {}): void {
  const callId = `c${(ids += 1)}`;
  s.send(ev('tool.requested', tool, kind, callId, extra));
  s.send(ev('tool.succeeded', tool, kind, callId, extra));
}
const read = (s: Session, targets?: string[]) => run(s, 'read_file', 'read', targets === undefined ? {} : { targets });
const ask = (s: Session) => run(s, 'ask_user', 'user_input');
const write = (s: Session, targets: string[], extra: Extra = {}) => run(s, 'bash', 'write', { targets, ...extra });
const checkWrite = (s: Session, targets: string[], extra: Extra = {}) =>
  s.send(ev('tool.requested', 'bash', 'write', `c${(ids += 1)}`, { targets, ...extra }));
const complete = (s: Session) => s.send({ type: 'verification.completed', at: T });

/** READING after an unrelated read. */
function reading(input?: SafetyInput): Session {
  const s = start(input);
  read(s, ['/srv/other']);
  return s;
}

describe('unknown places (issue 24)', () => {
  it('classification.ts re-exports unknownPlace and UNKNOWN_PLACE for the classifiers', () => {
    expect(classification.unknownPlace).toBe(unknownPlace);
    expect(classification.UNKNOWN_PLACE).toBe(UNKNOWN_PLACE);
    expect(classification.unknownPlace('sh <stdin>')).toBe('?/sh <stdin>');
  });

  it('a write to an unknown place is refused after an unrelated read: unknown-target, naming the place', () => {
    const s = reading();
    checkWrite(s, [PLACE]);
    expect(s.lastDecision).toMatchObject({ allowed: false, state: 'READING', rule: 'unknown-target', target: PLACE });
    expect(s.lastDecision.reason).toBe(reasonWithTarget(UNKNOWN_PLACE_REASON, PLACE));
    expect(s.lastDecision.reason).toMatch(/known only when the call runs/);
    expect(s.lastDecision.reason).toMatch(/Name the path literally after reading it, or ask the user/);
    expect(s.context.inFlight).toEqual([]);
  });

  it('a read of any place, the unknown place itself included, does not establish it', () => {
    const s = reading();
    read(s, [PLACE, '/', '~', '.']);
    expect(s.context.establishedTargets).not.toContain(PLACE);
    checkWrite(s, [PLACE]);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target' });
  });

  for (const confirmDestructive of [false, true]) {
    it(`is admitted after a successful user input (confirmDestructive ${String(confirmDestructive)}), once`, () => {
      const s = reading({ confirmDestructive });
      ask(s);
      expect(s.context.confirmedSinceWrite).toBe(true);
      write(s, [PLACE]);
      expect(s.decisions.at(-1)).toMatchObject({ allowed: true, state: 'READING' });
      expect(s.state).toBe('VERIFYING');
      // Verified by any later read: the unknown place is no verification target.
      expect(s.context.writeTargets).toEqual([]);
      read(s, ['/elsewhere']);
      expect(s.context.readAfterWrite).toBe(true);
      complete(s);
      expect(s.state).toBe('READING');
      // The write used the confirmation up: the next one is refused again.
      checkWrite(s, [PLACE]);
      expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target', target: PLACE });
    });
  }

  it('a failed user input confirms nothing; neutral computation confirms nothing', () => {
    const s = reading();
    const callId = 'u1';
    s.send(ev('tool.requested', 'ask_user', 'user_input', callId, {}));
    s.send(ev('tool.failed', 'ask_user', 'user_input', callId, {}));
    run(s, 'calculate', 'neutral');
    checkWrite(s, [PLACE]);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target' });
  });

  it('a confirmed unknown place still needs the write’s other targets established', () => {
    const s = reading();
    ask(s);
    checkWrite(s, [PLACE, '/srv/app']);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target', target: '/srv/app' });
    expect(s.lastDecision.reason).toBe(reasonWithTarget(TOOL_BLOCK_REASONS['unknown-target'], '/srv/app'));
  });

  it('a write naming an unknown place and a known target is verified only by a read touching the known one', () => {
    const s = reading();
    read(s, ['/srv/app']);
    ask(s);
    write(s, [PLACE, '/srv/app/x']);
    expect(s.context.writeTargets).toEqual(['/srv/app/x']);
    read(s, ['/elsewhere']);
    expect(s.context.readAfterWrite).toBe(false);
    read(s, ['/srv/app']);
    expect(s.context.readAfterWrite).toBe(true);
  });

  it('the refusal is cleared only by user input (clearedBy), and its words say how to recover', () => {
    expect(clearedByFor('unknown-target', PLACE)).toEqual(['user_input']);
    expect(clearedByFor('unknown-target', '/srv/app')).toEqual([...CLEARED_BY['unknown-target']]);
    const guard = createSessionGuard({ classify: () => ({ kind: 'write', targets: [PLACE], destructive: false }) });
    guard.record({ name: 'read_file', kind: 'read', targets: ['/x'] }, 'success');
    const decision = guard.check({ id: 'w1', name: 'bash', args: { command: 'rm -rf "$DIR"/' } });
    expect(decision.allowed).toBe(false);
    const error = decision.allowed ? null : decision.error;
    expect(error).toBeInstanceOf(FSMBlockedError);
    expect(error?.rule).toBe('unknown-target');
    expect(error?.target).toBe(PLACE);
    expect(error?.clearedBy).toEqual(['user_input']);
    expect(error?.toToolResult().error.clearedBy).toEqual(['user_input']);
    expect(refusalText(error!)).toMatch(/Name the path literally after reading it, or ask the user/);
  });
});

describe('named places with wildcards (issue 24)', () => {
  it('process:* (ps) establishes process:node (kill)', () => {
    const s = start();
    read(s, ['process:*']);
    checkWrite(s, ['process:node']);
    expect(s.lastDecision).toMatchObject({ allowed: true });
  });

  it('git:/a does not establish git:/b; git:/a establishes git:/a', () => {
    const s = start();
    read(s, ['git:/a']);
    checkWrite(s, ['git:/b']);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target', target: 'git:/b' });
    checkWrite(s, ['git:/a']);
    expect(s.lastDecision).toMatchObject({ allowed: true });
  });

  it('k8s:pod/* establishes k8s:pod/x, not k8s:deployment/x; a read of k8s:pod/x verifies a write of it', () => {
    const s = start();
    read(s, ['k8s:pod/*']);
    checkWrite(s, ['k8s:deployment/x']);
    expect(s.lastDecision).toMatchObject({ allowed: false, target: 'k8s:deployment/x' });
    write(s, ['k8s:pod/x']);
    expect(s.state).toBe('VERIFYING');
    read(s, ['k8s:pod/y']);
    expect(s.context.readAfterWrite).toBe(false);
    read(s, ['k8s:*']);
    expect(s.context.readAfterWrite).toBe(true);
  });
});

describe('links that lead out of their directory (issue 24)', () => {
  /** READING with `repo` established, after `ln -s .. repo/up` was admitted and ran. */
  function linked(): Session {
    const s = start();
    read(s, ['repo']);
    write(s, ['repo/up'], { links: ['repo/up'] });
    read(s, ['repo']);
    complete(s);
    return s;
  }

  it('an admitted write keeps its links; a later write through one is refused as an unknown place', () => {
    const s = linked();
    expect(s.context.links).toEqual(['repo/up']);
    checkWrite(s, ['repo/up/x']);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target', target: unknownPlace('repo/up/x (through a link)') });
    expect(clearedByFor('unknown-target', s.lastDecision.target)).toEqual(['user_input']);
    checkWrite(s, ['repo/other']);
    expect(s.lastDecision).toMatchObject({ allowed: true });
  });

  it('a read through a link establishes nothing there; user input confirms the write', () => {
    const s = linked();
    read(s, ['repo/up/x']);
    expect(s.context.establishedTargets).not.toContain('repo/up/x');
    ask(s);
    checkWrite(s, ['repo/up/x']);
    expect(s.lastDecision).toMatchObject({ allowed: true });
  });

  it('links on a refused write, or on a read, are not kept', () => {
    const s = start();
    read(s, ['/srv/a']);
    checkWrite(s, ['/srv/b'], { links: ['/srv/a/up'] });
    expect(s.lastDecision.allowed).toBe(false);
    run(s, 'read_file', 'read', { targets: ['/srv/a'], links: ['/srv/a/up'] });
    expect(s.context.links).toBeUndefined();
  });

  it('past MAX_LINKS every path becomes an unknown place (LINKS_OVERFLOW) until reset; resetKeepingProgress keeps links', () => {
    const s = start();
    read(s, ['/']);
    const many = Array.from({ length: MAX_LINKS + 1 }, (_, i) => `/l/${i}`);
    for (let i = 0; i < many.length; i += 32) {
      write(s, [`/w/${i}`], { links: many.slice(i, i + 32) });
      read(s, ['/']);
      complete(s);
    }
    expect(s.context.links).toEqual(LINKS_OVERFLOW);
    checkWrite(s, ['/srv/x']);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target' });
    checkWrite(s, ['process:node']);
    expect(s.lastDecision).toMatchObject({ allowed: false, rule: 'unknown-target', target: 'process:node' });
    s.send({ type: 'session.resetKeepingProgress', at: T });
    expect(s.context.links).toEqual(LINKS_OVERFLOW);
    s.send({ type: 'session.reset', at: T });
    expect(s.context.links ?? []).toEqual([]);
    read(s, ['/']);
    checkWrite(s, ['/srv/x']);
    expect(s.lastDecision).toMatchObject({ allowed: true });
  });

  it('a link list that cannot be read whole fails closed', () => {
    const s = start();
    read(s, ['/']);
    write(s, ['/w'], { links: Array.from({ length: 40 }, (_, i) => `/l/${i}`) });
    expect(s.context.links).toEqual(LINKS_OVERFLOW);
  });
});

describe('snapshots (issue 24)', () => {
  it('links and a confirmation without confirmDestructive survive the round trip; a snapshot without links restores', () => {
    const s = start();
    read(s, ['repo']);
    write(s, ['repo/up'], { links: ['repo/up'] });
    read(s, ['repo']);
    complete(s);
    ask(s);
    const snap = s.actor.getSnapshot();
    const persisted = toPersistedSnapshot('READING', snap.context);
    expect(persisted.links).toEqual(['repo/up']);
    expect(persisted.confirmed).toBe(true);
    const restored = parsePersistedSnapshot(JSON.parse(JSON.stringify(persisted)));
    expect(restored.context).toEqual(snap.context);
    const { links: _links, ...older } = persisted;
    expect(parsePersistedSnapshot(older).context.links).toBeUndefined();
    const actor = createActor(safetyMachine, { snapshot: safetyMachine.resolveState({ value: 'READING', context: restored.context }) });
    actor.start();
    const decisions: unknown[] = [];
    actor.on('gate.decided', (e) => decisions.push(e));
    actor.send({ type: 'tool.requested', tool: 'bash', kind: 'write', at: T, callId: 'x', targets: ['repo/up/y'] });
    expect(decisions.at(-1)).toMatchObject({ allowed: true }); // confirmed by the user input before the snapshot
  });

  it('a snapshot keeping an unknown place established, or a link that is not a whole path, is refused', () => {
    const base = { v: 2, state: 'READING', read: ['r', T] } as const;
    expect(() => parsePersistedSnapshot({ ...base, targets: [PLACE] })).toThrow(/unknown place/);
    expect(() => parsePersistedSnapshot({ ...base, links: ['table:x'] })).toThrow(/whole path/);
    expect(parsePersistedSnapshot({ ...base, links: ['/a/up'] }).context.links).toEqual(['/a/up']);
  });
});

describe('links through the session guard (issue 24)', () => {
  it('a classification’s links reach the machine on check, and are kept once the write is admitted', () => {
    const guard = createSessionGuard({
      classify: (name) =>
        name === 'ln'
          ? { kind: 'write', targets: ['repo/up'], destructive: false, links: ['repo/up'] }
          : { kind: 'read', targets: ['repo'], destructive: false },
    });
    guard.record({ id: 'r1', name: 'ls', args: {} }, 'success');
    expect(guard.check({ id: 'w1', name: 'ln', args: {} }).allowed).toBe(true);
    expect(guard.context.links).toEqual(['repo/up']);
  });

  it('links given on a call override the classifier; malformed links are refused with a TypeError', () => {
    const guard = createSessionGuard();
    guard.record({ name: 'read_file', kind: 'read', targets: ['/srv'] }, 'success');
    expect(guard.check({ id: 'w1', name: 'bash', kind: 'write', targets: ['/srv/l'], links: ['/srv/l'] }).allowed).toBe(true);
    expect(guard.context.links).toEqual(['/srv/l']);
    expect(() => guard.check({ id: 'w2', name: 'bash', kind: 'write', links: [3] as unknown as string[] })).toThrow(TypeError);
  });

  it('a classifier answering links that are not an array of strings fails closed: every path is an unknown place', () => {
    const guard = createSessionGuard({
      classify: () => ({ kind: 'write', targets: ['/srv/x'], destructive: false, links: 'nope' as unknown as string[] }),
    });
    guard.record({ name: 'read_file', kind: 'read', targets: ['/'] }, 'success');
    expect(guard.check({ id: 'w1', name: 'bash', args: {} }).allowed).toBe(true);
    expect(guard.context.links).toEqual(LINKS_OVERFLOW);
  });
});
