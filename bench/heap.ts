/**
 * Heap bytes per session, measured in a process of its own (run with
 * `node --expose-gc`): `node --expose-gc dist/bench/heap.js <kind> <sessions>`.
 * Prints `{ "kind", "sessions", "bytesPerSession" }` as JSON.
 *
 * Kinds: `guard` (a live `createSessionGuard`, run by the compiled
 * interpreter), `actor` (the same with `guard.actor` created, so an XState
 * actor holds and drives the session), `reference`
 * (the plain-TypeScript reference gate), `stored` (a session of the session
 * store evicted to its persisted snapshot in the memory store). Each session
 * has resolved and read once (READING), with OpenAI-style call ids.
 */
import { compileCatalog, builtinCatalogs } from '../src/classify/catalog/index.js';
import { createSessionGuard } from '../src/guard/session-guard.js';
import { createSessionStore } from '../src/store/session-store.js';
import { ReferenceGuard } from './reference.js';

const T0 = 1_700_000_000_000;
const classify = compileCatalog(builtinCatalogs['tau-airline']).kindOf;

function callId(i: number, n: number): string {
  return `call_${(i * 7919 + n).toString(36).padStart(22, 'x')}`;
}

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function measure(kind: string, sessions: number): number {
  const now = () => T0;
  const held: unknown[] = new Array(sessions);
  let keep: { sweep(): number } | null = null;
  const before = heapUsed();
  if (kind === 'guard' || kind === 'actor') {
    for (let i = 0; i < sessions; i++) {
      const guard = createSessionGuard({ now, classify });
      if (kind === 'actor') void guard.actor; // the XState actor, created and then driving
      guard.record({ id: callId(i, 0), name: 'get_user_details' });
      guard.check({ id: callId(i, 1), name: 'get_reservation_details' });
      guard.record({ id: callId(i, 1), name: 'get_reservation_details' });
      held[i] = guard;
    }
  } else if (kind === 'reference') {
    for (let i = 0; i < sessions; i++) {
      const guard = new ReferenceGuard(now, classify);
      guard.record({ id: callId(i, 0), name: 'get_user_details' });
      guard.check({ id: callId(i, 1), name: 'get_reservation_details' });
      guard.record({ id: callId(i, 1), name: 'get_reservation_details' });
      held[i] = guard;
    }
  } else if (kind === 'stored') {
    let t = T0;
    const store = createSessionStore({ now: () => t, idleMs: 60_000, guard: { classify } });
    for (let i = 0; i < sessions; i++) {
      const guard = store.session(`chat-${i}`);
      guard.record({ id: callId(i, 0), name: 'get_user_details' });
      guard.check({ id: callId(i, 1), name: 'get_reservation_details' });
      guard.record({ id: callId(i, 1), name: 'get_reservation_details' });
    }
    t += 120_000;
    store.sweep();
    keep = store;
  } else {
    throw new Error(`unknown kind ${kind}`);
  }
  const after = heapUsed();
  if (held.length !== sessions || (kind === 'stored' && keep === null)) throw new Error('lost the sessions');
  return (after - before) / sessions;
}

const [kind = 'guard', count = '10000'] = process.argv.slice(2);
const sessions = Number(count);
process.stdout.write(`${JSON.stringify({ kind, sessions, bytesPerSession: measure(kind, sessions) })}\n`);
