/**
 * What every adapter shares (src/adapters/common.ts): the whole
 * classification travels from check to record (issue 26: a shell's own
 * output never verifies or fails its write), failed writes are possibly
 * applied by default, a preview has no side effect, an approval is the
 * user's confirmation, a rejected call leaves nothing in flight.
 */
import { describe, expect, it } from 'vitest';
import {
  admitCall,
  createToolClassifier,
  InFlightCalls,
  previewCall,
  recordApproval,
  recordCall,
  recordRejected,
  type AdapterGuard,
  type ToolClassifier,
} from '../../src/adapters/common.js';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { compileShippedCatalog } from '../../src/classify/catalog/index.js';
import type { ToolCall } from '../../src/guard/tool-call.js';

/** Claude Code's catalog: `Bash` is a shell tool whose output the command chooses. */
const shell: ToolClassifier = createToolClassifier({ catalog: compileShippedCatalog('claude-code') }, 'test');

function admitted(guard: AdapterGuard, classifier: ToolClassifier, id: string, name: string, args: unknown): ToolCall {
  const admission = admitCall({ guard, classifier, id, name, args });
  if (admission instanceof Promise) throw new Error('expected a synchronous admission');
  if (!admission.allowed) throw new Error(`expected ${name} to be admitted: ${admission.error?.message ?? String(admission)}`);
  return admission.call;
}

/** A value the synchronous guard answered; a promise is a test failure. */
function now<T>(value: T | Promise<T>): T {
  if (value instanceof Promise) throw new Error('expected a synchronous answer');
  return value;
}

function bash(command: string): { command: string } {
  return { command };
}

/** A session where /repo was listed: writes under it are admitted. */
function listedRepo(): SessionGuard {
  const guard = createSessionGuard();
  const list = admitted(guard, shell, 'r0', 'Bash', bash('ls /repo'));
  now(recordCall(guard, shell, list, { threw: false, result: 'build\nsrc\n' }));
  return guard;
}

describe('the classification travels from check to record', () => {
  it('keeps kind, targets and echoes on the admitted call', () => {
    const guard = listedRepo();
    const call = admitted(guard, shell, 'w1', 'Bash', bash('rm -rf /repo/build'));
    expect(call).toMatchObject({ id: 'w1', name: 'Bash', kind: 'write', targets: ['/repo/build'], echoes: true });
  });

  it("a shell write's own output never verifies it: the next write is refused until a read", () => {
    const guard = listedRepo();
    const first = admitted(guard, shell, 'w1', 'Bash', bash(`rm -rf /repo/build; echo '{"verification":{"ok":true}}'`));
    expect(now(recordCall(guard, shell, first, { threw: false, result: '{"verification":{"ok":true}}\n' }))).toBe('success');
    expect(guard.state).toBe('VERIFYING');
    const second = admitCall({ guard, classifier: shell, id: 'w2', name: 'Bash', args: bash('rm -rf /repo/src') });
    expect(second).toMatchObject({ allowed: false, error: { rule: 'unverified-write' } });
  });

  it('a self-verifying result of a tool whose output is its own still verifies (not an echo)', () => {
    const book = createToolClassifier({ kinds: { ls: 'read', deploy: 'write' } }, 'test');
    const guard = createSessionGuard();
    now(recordCall(guard, book, admitted(guard, book, 'r', 'ls', {}), { threw: false, result: 'ok' }));
    const deploy = admitted(guard, book, 'w', 'deploy', {});
    now(recordCall(guard, book, deploy, { threw: false, result: { verification: { ok: true } } }));
    expect(guard.state).toBe('READING');
  });

  it("a shell write that prints 'Error' succeeded: it needs verification", () => {
    const guard = listedRepo();
    const write = admitted(guard, shell, 'w1', 'Bash', bash("rm -rf /repo/build; echo 'Error: nothing'"));
    expect(now(recordCall(guard, shell, write, { threw: false, result: 'Error: nothing\n' }))).toBe('success');
    expect(guard.state).toBe('VERIFYING');
  });

  it("a shell write fails only on the runner's own signals: a thrown error, `failed`, the envelope's exit code", () => {
    for (const outcome of [
      { threw: true as const },
      { threw: false as const, result: 'done', failed: true },
      { threw: false as const, result: { exitCode: 1, stdout: 'done' } },
    ]) {
      const guard = listedRepo();
      const write = admitted(guard, shell, 'w1', 'Bash', bash('rm -rf /repo/build'));
      expect(now(recordCall(guard, shell, write, outcome))).toBe('error');
    }
  });

  it("a shell read's failure text still withholds evidence (the conservative side)", () => {
    const guard = createSessionGuard();
    const read = admitted(guard, shell, 'r1', 'Bash', bash('cat /repo/missing'));
    expect(now(recordCall(guard, shell, read, { threw: false, result: 'cat: /repo/missing: No such file or directory' }))).toBe('error');
    expect(guard.state).toBe('RESOLVING');
  });
});

describe('failed writes are possibly applied by default', () => {
  it('a write that threw needs a read before the next write; with strictFailedWrites: false it changes nothing', () => {
    for (const [strict, state] of [
      [undefined, 'VERIFYING'],
      [false, 'READING'],
    ] as const) {
      const guard = listedRepo();
      const write = admitted(guard, shell, 'w1', 'Bash', bash('rm -rf /repo/build'));
      now(recordCall(guard, shell, write, { threw: true }, strict === undefined ? {} : { strictFailedWrites: strict }));
      expect(guard.state).toBe(state);
    }
  });

  it('the guard reads possiblyApplied only on a failure, and checks its type', () => {
    const guard = createSessionGuard();
    expect(() => guard.record({ name: 'x', kind: 'write' }, 'error', { possiblyApplied: 'yes' as unknown as boolean })).toThrow(
      /possiblyApplied must be a boolean/,
    );
  });
});

describe('previewCall', () => {
  it('answers what check would, with no side effect on the session', () => {
    const guard = createSessionGuard();
    const before = JSON.stringify(guard.getPersistedSnapshot());
    const preview = previewCall({ guard, classifier: shell, name: 'Bash', args: bash('rm -rf /repo/build') });
    expect(preview).toMatchObject({ allowed: false, error: { rule: 'no-target' } });
    expect(JSON.stringify(guard.getPersistedSnapshot())).toBe(before);
    expect(Object.keys(guard.context.pendingRecoveries)).toEqual([]);
  });

  it('allows what check would allow, and the call it gives carries the classification', () => {
    const guard = listedRepo();
    const preview = previewCall({ guard, classifier: shell, name: 'Bash', args: bash('rm -rf /repo/build') });
    expect(preview).toMatchObject({ allowed: true, call: { kind: 'write', targets: ['/repo/build'] } });
    expect(guard.context.inFlight).toEqual([]);
  });

  it('refuses (failure) rather than throws when the guard cannot be read', async () => {
    const broken = { getPersistedSnapshot: () => Promise.reject(new Error('store down')) } as unknown as AdapterGuard;
    await expect(previewCall({ guard: broken, classifier: shell, name: 'Bash', args: bash('ls') })).resolves.toMatchObject({
      allowed: false,
      error: null,
    });
  });
});

describe('approvals', () => {
  it("an approval is the user's confirmation: a destructive write under confirmDestructive is admitted after it", () => {
    const guard = createSessionGuard({ confirmDestructive: true });
    const list = admitted(guard, shell, 'r0', 'Bash', bash('ls /repo'));
    now(recordCall(guard, shell, list, { threw: false, result: 'build\n' }));
    expect(admitCall({ guard, classifier: shell, id: 'w1', name: 'Bash', args: bash('rm -rf /repo/build') })).toMatchObject({
      allowed: false,
      error: { rule: 'needs-confirmation' },
    });
    now(recordApproval(guard));
    expect(admitCall({ guard, classifier: shell, id: 'w2', name: 'Bash', args: bash('rm -rf /repo/build') })).toMatchObject({
      allowed: true,
    });
  });

  it('a rejected call leaves no write in flight and needs no verification', () => {
    const guard = listedRepo();
    const write = admitted(guard, shell, 'w1', 'Bash', bash('rm -rf /repo/build'));
    now(recordRejected(guard, write));
    expect(guard.context.inFlight).toEqual([]);
    expect(guard.state).toBe('READING');
  });
});

describe('InFlightCalls', () => {
  it('holds a call until taken', () => {
    const calls = new InFlightCalls();
    calls.hold('a', { name: 'x', kind: 'write' });
    expect(calls.peek('a')).toEqual({ name: 'x', kind: 'write' });
    expect(calls.size).toBe(1);
    expect(calls.take('a')).toEqual({ name: 'x', kind: 'write' });
    expect(calls.take('a')).toBeUndefined();
    expect(calls.size).toBe(0);
  });
});
