/**
 * Hostile input: property-based fuzzing (fast-check) of the classifier, the
 * session guard and the transcript readers. Nothing throws out of the guard
 * but the documented TypeErrors, the actor never enters an error state, no
 * prototype is polluted, and anything unknown fails closed to `write`.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_NAME_LENGTH } from '../../machines/safety.policy.js';
import { SAFETY_STATES, TOOL_KINDS, type SafetyEvent, type ToolKind } from '../../machines/safety.types.js';
import { createSessionGuard, type SessionGuard } from '../../src/guard/session-guard.js';
import { auditRuns } from '../../src/audit/audit.js';
import { compileCatalog, builtinCatalogs, classifyToolCall, kindFromMcpAnnotations } from '../../src/classify/catalog/index.js';
import { parsePersistedSnapshot } from '../../src/guard/snapshot.js';
import { readTranscript } from '../../src/audit/transcripts/index.js';
import { SnapshotError } from '../../src/errors/snapshot-error.js';
import { TranscriptError } from '../../src/errors/transcript-error.js';

// ---------------------------------------------------------------------------
// Prototype pollution: every test checks the built-in prototypes are untouched.

const PROTOTYPES = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
let prototypeKeys: string[][] = [];
beforeEach(() => {
  prototypeKeys = PROTOTYPES.map((proto) => Object.getOwnPropertyNames(proto).sort());
});
afterEach(() => {
  expect(PROTOTYPES.map((proto) => Object.getOwnPropertyNames(proto).sort())).toEqual(prototypeKeys);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(({} as Record<string, unknown>).action).toBeUndefined();
});

// ---------------------------------------------------------------------------
// Arbitraries.

/** Latin letters and a look-alike from another script (Cyrillic, Greek, fullwidth). */
const LOOK_ALIKES: Readonly<Record<string, readonly string[]>> = {
  a: ['\u0430', '\u03b1', '\uff41'],
  c: ['\u0441', '\u03f2', '\uff43'],
  e: ['\u0435', '\u03b5', '\uff45'],
  i: ['\u0456', '\u03b9', '\uff49'],
  l: ['\u04cf', '\u0406', '\uff4c'],
  o: ['\u043e', '\u03bf', '\uff4f'],
  p: ['\u0440', '\u03c1', '\uff50'],
  s: ['\u0455', '\uff53'],
  t: ['\u03c4', '\uff54'],
  u: ['\u03c5', '\uff55'],
  r: ['\u0433', '\uff52'],
  d: ['\u0501', '\uff44'],
  g: ['\u0261', '\uff47'],
  n: ['\u0578', '\uff4e'],
  y: ['\u0443', '\uff59'],
  h: ['\u04bb', '\uff48'],
  q: ['\u051b', '\uff51'],
  m: ['\uff4d'],
  k: ['\u03ba', '\uff4b'],
  w: ['\u051d', '\uff57'],
  f: ['\uff46'],
  b: ['\u0184', '\uff42'],
  v: ['\u03bd', '\uff56'],
  x: ['\u0445', '\uff58'],
  z: ['\uff5a'],
};

/** `word` with at least one letter swapped for a look-alike from another script. */
function lookAlikeOf(word: string): fc.Arbitrary<string> {
  const positions = [...word].flatMap((char, i) => (LOOK_ALIKES[char] ? [i] : []));
  return fc
    .tuple(fc.subarray(positions, { minLength: 1 }), fc.nat())
    .map(([chosen, seed]) =>
      [...word].map((char, i) => (chosen.includes(i) ? LOOK_ALIKES[char]![(seed + i) % LOOK_ALIKES[char]!.length]! : char)).join(''),
    );
}

const pulse = builtinCatalogs.pulse;
const PULSE_TOOLS = Object.keys(pulse.tools);
const STATIC_NON_WRITES = PULSE_TOOLS.filter((name) => typeof pulse.tools[name] === 'string' && pulse.tools[name] !== 'write');
const KEYED = PULSE_TOOLS.filter((name) => typeof pulse.tools[name] === 'object');
const READ_WORDS = pulse.fallback!.readWords;

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

/** One MiB: big enough to hurt if anything copies or scans it badly, small enough to keep runs quick. */
const HUGE = 'get '.repeat(1 << 18);

/** Strings a model or a transcript might send: any Unicode, prototype names, look-alikes, now and then a huge one. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 20, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 10, arbitrary: fc.constantFrom(...PROTO_KEYS, ...PULSE_TOOLS, ...READ_WORDS, '', ' ', '\u0000', '\ufeff') },
  { weight: 10, arbitrary: fc.constantFrom(...STATIC_NON_WRITES, ...READ_WORDS).chain(lookAlikeOf) },
  { weight: 1, arbitrary: fc.constantFrom(HUGE, `  ${'pulse_metrics'.repeat(10_000)}  `) },
);

/** A JSON object whose own keys include `__proto__` or `constructor` (as JSON.parse makes them). */
const protoKeyedObject: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.constantFrom(...READ_WORDS, 'list', 'polluted'))
  .map(([key, word]) => JSON.parse(`{"${key}":{"action":"${word}","operation":"${word}","polluted":true,"prototype":{"polluted":true}}}`));

/** Tool-call arguments: any JSON, any value, JSON text, prototype keys, inherited fields, huge strings. */
const hostileArgs: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true, withBoxedValues: true }),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  protoKeyedObject,
  protoKeyedObject.map((value) => JSON.stringify(value)),
  fc.constantFrom(...READ_WORDS).map((word) => Object.create({ action: word, operation: word }) as unknown),
  fc.record({ action: hostileString, operation: hostileString, type: hostileString }, { requiredKeys: [] }),
);

/** Tool-call arguments that survive JSON.stringify (for transcripts). */
const hostileJsonArgs: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  protoKeyedObject,
  fc.record({ action: hostileString, operation: hostileString, type: hostileString }, { requiredKeys: [] }),
);

/** A value where a kind should be: the kinds, near misses, anything. */
const hostileKind: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...TOOL_KINDS),
  fc.constantFrom('READ', 'read ', 'Resolve', 'writer', '', '__proto__', 'toString', 'r\u0435ad'),
  fc.anything(),
);

// ---------------------------------------------------------------------------

describe('the classifier under hostile input', () => {
  const classifiers = [
    ['pulse', classifyToolCall],
    ['tau-airline', compileCatalog(builtinCatalogs['tau-airline']).kindOf],
  ] as const;

  it.each(classifiers)('%s: never throws and always answers a kind, whatever the name and arguments', (_, classify) => {
    fc.assert(
      fc.property(fc.oneof(hostileString, fc.anything()), hostileArgs, (name, args) => {
        expect(TOOL_KINDS).toContain(classify(name as string, args));
      }),
      { numRuns: 300 },
    );
  });

  it('classifies a tool it does not know as a write unless its action or operation is a read word', () => {
    fc.assert(
      fc.property(
        hostileString.filter((name) => !PULSE_TOOLS.includes(name.trim())),
        hostileArgs,
        (name, args) => {
          const kind = classifyToolCall(name, args);
          expect(['read', 'write']).toContain(kind);
          if (typeof args !== 'object' || args === null || (!Object.hasOwn(args, 'action') && !Object.hasOwn(args, 'operation'))) {
            if (typeof args !== 'string') expect(kind).toBe('write');
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('does not take a look-alike of a read tool’s name for that tool', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STATIC_NON_WRITES).chain(lookAlikeOf), (name) => {
        expect(classifyToolCall(name, {})).toBe('write');
      }),
    );
  });

  it('does not take a look-alike of a keyed tool’s read value for that value', () => {
    const cases = KEYED.flatMap((tool) => {
      const rule = pulse.tools[tool] as { argument: string; cases: Record<string, ToolKind> };
      return Object.keys(rule.cases).map((value) => [tool, rule.argument, value] as const);
    });
    fc.assert(
      fc.property(
        fc.constantFrom(...cases).chain(([tool, argument, value]) => lookAlikeOf(value).map((v) => [tool, argument, v] as const)),
        ([tool, argument, value]) => {
          expect(classifyToolCall(tool, { [argument]: value })).toBe('write');
        },
      ),
    );
  });

  it('does not take a look-alike of a read word for a read', () => {
    fc.assert(
      fc.property(fc.constantFrom(...READ_WORDS).chain(lookAlikeOf), (word) => {
        expect(classifyToolCall('some_unknown_tool', { action: word })).toBe('write');
      }),
    );
  });

  it('ignores an action that is only inherited or hidden under __proto__ or constructor', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KEYED), protoKeyedObject, (tool, args) => {
        expect(classifyToolCall(tool, args)).toBe('write');
        expect(classifyToolCall(tool, Object.create({ action: 'list', type: 'pods' }))).toBe('write');
      }),
    );
  });

  it('classifies huge names and arguments without trouble', () => {
    expect(classifyToolCall('x'.repeat(1 << 20), { action: HUGE })).toBe('read');
    expect(classifyToolCall(HUGE, { action: HUGE })).toBe('write'); // a name with spaces is not judged by words
    expect(classifyToolCall('pulse_alerts', { action: HUGE })).toBe('write');
    expect(classifyToolCall(`  ${'pulse_metrics'.repeat(10_000)}  `, JSON.stringify({ action: HUGE }))).toBe('read');
    expect(classifyToolCall('x', { action: `${HUGE}restart` })).toBe('write');
  });

  it('fails closed to write on arguments whose getters or proxy traps throw', () => {
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor: () => {
          throw new Error('trap');
        },
        has: () => {
          throw new Error('trap');
        },
      },
    );
    expect(classifyToolCall('pulse_alerts', trap)).toBe('write');
    expect(
      classifyToolCall('unknown_tool', {
        get action() {
          throw new Error('getter');
        },
      }),
    ).toBe('write');
  });

  it('reads MCP annotations as a write unless trusted and readOnlyHint is exactly true', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (annotations, trusted) => {
        const kind = kindFromMcpAnnotations(annotations, { trusted } as { trusted: boolean });
        const readOnly =
          trusted === true &&
          typeof annotations === 'object' &&
          annotations !== null &&
          Object.hasOwn(annotations, 'readOnlyHint') &&
          (annotations as { readOnlyHint: unknown }).readOnlyHint === true;
        expect(kind).toBe(readOnly ? 'read' : 'write');
      }),
    );
  });
});

// ---------------------------------------------------------------------------

type HostileOp =
  | { op: 'check' | 'record'; call: unknown; outcome: unknown }
  | { op: 'answer' | 'complete' | 'reset' | 'resetKeep' }
  | { op: 'send'; event: Record<string, unknown> };

const hostileCall: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        id: fc.oneof(fc.constantFrom('a', 'b', '__proto__'), hostileString, fc.anything()),
        name: fc.oneof(hostileString, fc.anything()),
        args: hostileArgs,
        kind: hostileKind,
      },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      id: fc.constantFrom('a', 'b', 'c'),
      name: fc.constantFrom('pulse_metrics', 'pulse_query', 'pulse_control', 'mystery_tool'),
      args: hostileArgs,
    }),
  },
  { weight: 1, arbitrary: fc.anything() },
  { weight: 1, arbitrary: protoKeyedObject },
);

const EVENT_TYPES: SafetyEvent['type'][] = [
  'tool.requested',
  'tool.succeeded',
  'tool.failed',
  'answer.requested',
  'verification.completed',
  'session.reset',
  'session.resetKeepingProgress',
  'clock.ticked',
];

const hostileOp: fc.Arbitrary<HostileOp> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      op: fc.constantFrom('check' as const, 'record' as const),
      call: hostileCall,
      outcome: fc.oneof(fc.constantFrom('success', 'error', undefined), fc.anything()),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      { op: 'answer' as const },
      { op: 'complete' as const },
      { op: 'reset' as const },
      { op: 'resetKeep' as const },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('send' as const),
      event: fc.record(
        {
          type: fc.constantFrom(...EVENT_TYPES),
          tool: fc.oneof(hostileString, fc.anything()),
          kind: hostileKind,
          callId: fc.anything(),
          at: fc.oneof(fc.double(), fc.anything()),
        },
        { requiredKeys: ['type'] },
      ),
    }),
  },
);

/**
 * Whether the adapter documents a TypeError for this call (or outcome) in
 * this session: a malformed call, a bad outcome, or a check under a
 * (non-empty) id that is in flight.
 */
function malformed(op: { call: unknown; outcome: unknown; op: 'check' | 'record' }, guard: SessionGuard): boolean {
  const call = op.call;
  if (typeof call !== 'object' || call === null) return true;
  const { name, id } = call as { name?: unknown; id?: unknown };
  if (typeof name !== 'string') return true;
  if (id !== undefined && typeof id !== 'string') return true;
  if (name.length > MAX_NAME_LENGTH || (typeof id === 'string' && id.length > MAX_NAME_LENGTH)) return true;
  if (op.op === 'check') return id !== undefined && id !== '' && guard.context.inFlight.some((c) => c.key === `id:${id}`);
  return op.outcome !== undefined && op.outcome !== 'success' && op.outcome !== 'error';
}

describe('the session guard under hostile input', () => {
  it('throws only the documented TypeError, stays active, only admits writes in READING, and stays restorable', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(hostileOp, { maxLength: 40 }), (strictFailedWrites, ops) => {
        let t = 1_700_000_000_000;
        const guard: SessionGuard = createSessionGuard({ strictFailedWrites, now: () => (t += 1000) });
        for (const op of ops) {
          const before = guard.state;
          if (op.op === 'check' || op.op === 'record') {
            const documented = malformed(op, guard);
            let result: unknown;
            let thrown: unknown;
            try {
              result = op.op === 'check' ? guard.check(op.call as never) : guard.record(op.call as never, op.outcome as never);
            } catch (error) {
              thrown = error;
            }
            if (documented) {
              expect(thrown).toBeInstanceOf(TypeError);
            } else {
              expect(thrown).toBeUndefined();
            }
            if (op.op === 'check' && thrown === undefined) {
              const decision = result as { allowed: boolean; kind: ToolKind };
              expect(TOOL_KINDS).toContain(decision.kind);
              if (decision.allowed && decision.kind === 'write') expect(before).toBe('READING');
            }
          } else if (op.op === 'answer') {
            guard.finalAnswer();
          } else if (op.op === 'complete') {
            guard.completeVerification();
          } else if (op.op === 'reset') {
            guard.reset();
          } else if (op.op === 'resetKeep') {
            guard.resetKeepProgress();
          } else {
            guard.actor.send((op as { event: unknown }).event as SafetyEvent);
          }
          expect(guard.actor.getSnapshot().status).toBe('active');
          expect(SAFETY_STATES).toContain(guard.state);
          expect(() => parsePersistedSnapshot(JSON.parse(JSON.stringify(guard.getPersistedSnapshot())))).not.toThrow();
        }
      }),
      { numRuns: 200 },
    );
  });

  it('fails closed: a call of an unknown tool without a read word, or with a kind outside the vocabulary, is a write', () => {
    fc.assert(
      fc.property(
        hostileString.filter((name) => !PULSE_TOOLS.includes(name.trim())),
        fc.oneof(
          fc.constant(undefined),
          hostileKind.filter((kind) => !TOOL_KINDS.includes(kind as ToolKind)),
        ),
        (name, kind) => {
          const guard = createSessionGuard();
          guard.record({ name: 'pulse_query' });
          const call = { name, args: { action: 'restart' }, ...(kind === undefined ? {} : { kind: kind as ToolKind }) };
          // A name past MAX_NAME_LENGTH is not admitted at all: the documented TypeError.
          if (name.length > MAX_NAME_LENGTH) expect(() => guard.check(call)).toThrow(TypeError);
          else expect(guard.check(call).kind).toBe('write');
        },
      ),
    );
  });

  it('turns a call whose getters or proxy traps throw into the documented TypeError', () => {
    const guard = createSessionGuard();
    expect(() =>
      guard.check({
        get name(): string {
          throw new Error('getter');
        },
      }),
    ).toThrow(TypeError);
    expect(() =>
      guard.record(
        new Proxy(
          { name: 'x' },
          {
            get: () => {
              throw new Error('trap');
            },
          },
        ),
      ),
    ).toThrow(TypeError);
    expect(guard.actor.getSnapshot().status).toBe('active');
  });

  it('reads a call once: a getter cannot show the classifier a read and the gate a write', () => {
    const guard = createSessionGuard();
    let reads = 0;
    const call = {
      get name() {
        reads += 1;
        return reads === 1 ? 'pulse_metrics' : 'pulse_control';
      },
    };
    const decision = guard.check(call);
    expect(decision.kind).toBe('read');
    expect(guard.context.inFlight[0]?.tool).toBe('pulse_metrics');
  });

  it('a raw actor that checks ids again while they are in flight keeps a session that persists and restores', () => {
    const rawEvent = fc.record({
      type: fc.constantFrom('tool.requested', 'tool.requested', 'tool.succeeded', 'tool.failed'),
      tool: fc.constantFrom('pulse_metrics', 'pulse_control', 'pulse_docker'),
      kind: fc.constantFrom<ToolKind>(...TOOL_KINDS),
      callId: fc.constantFrom('a', 'b', undefined),
      kindUnstated: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(rawEvent, { maxLength: 40 }), (events) => {
        let t = 1_700_000_000_000;
        const guard = createSessionGuard({ now: () => t });
        guard.record({ name: 'pulse_query' }); // a target, so writes are admitted
        for (const { callId, ...event } of events) {
          t += 1000;
          guard.actor.send({ ...event, ...(callId === undefined ? {} : { callId }), at: t } as SafetyEvent);
          expect(() => parsePersistedSnapshot(JSON.parse(JSON.stringify(guard.getPersistedSnapshot())))).not.toThrow();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses any value as a snapshot with a SnapshotError, or restores a restorable session', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.jsonValue(),
          protoKeyedObject,
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string(),
        ),
        (snapshot) => {
          try {
            const guard = createSessionGuard({ snapshot });
            expect(SAFETY_STATES).toContain(guard.state);
          } catch (error) {
            expect(error).toBeInstanceOf(SnapshotError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------

/** Valid transcripts in each supported format, to mutate. */
const SAMPLES: readonly [string, string][] = [
  [
    'openai.json',
    JSON.stringify({
      messages: [
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'Restart the web container.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'pulse_query', arguments: '{"q":"web"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"id":"web"}' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c2', type: 'function', function: { name: 'pulse_control', arguments: '{"action":"restart"}' } }],
        },
        { role: 'tool', tool_call_id: 'c2', content: 'ok' },
        { role: 'assistant', content: 'Done.' },
      ],
    }),
  ],
  [
    'tau.json',
    JSON.stringify([
      {
        task_id: 1,
        trial: 0,
        reward: 1,
        traj: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'a', type: 'function', function: { name: 'get_user_details', arguments: '{"user_id":"u"}' } }],
          },
          { role: 'tool', tool_call_id: 'a', name: 'get_user_details', content: 'Error: user not found' },
          { role: 'assistant', content: 'Sorry.' },
        ],
      },
    ]),
  ],
  [
    'anthropic.json',
    JSON.stringify([
      { role: 'user', content: 'Look at the logs.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 't1', name: 'pulse_get_docker_logs', input: { id: 'web' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'all quiet', is_error: false }] },
      { role: 'assistant', content: [{ type: 'text', text: 'All quiet.' }] },
    ]),
  ],
  [
    'events.jsonl',
    [
      '{"type":"run","id":"r1","reward":1}',
      '{"type":"call","id":"c1","name":"pulse_query","args":{}}',
      '{"type":"result","id":"c1","outcome":"success"}',
      '{"type":"clock","advanceMs":660000}',
      '{"type":"answer","text":"ok"}',
      '{"type":"reset"}',
    ].join('\n'),
  ],
];

/** A random edit of a text: delete, insert or replace a slice. */
const textEdit = fc.record({
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  length: fc.nat({ max: 12 }),
  insert: fc.oneof(
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.constantFrom('"__proto__":{"polluted":true},', '[', '{', '"', '\\', '\n', 'null', '[]', '{}'),
  ),
});

function applyEdits(text: string, edits: readonly { at: number; length: number; insert: string }[]): string {
  let out = text;
  for (const { at, length, insert } of edits) {
    const i = Math.floor(at * out.length);
    out = out.slice(0, i) + insert + out.slice(i + length);
  }
  return out;
}

/** A JSON value with one node replaced by something else. */
function replaceSomewhere(value: unknown, path: readonly number[], replacement: unknown): unknown {
  if (path.length === 0 || typeof value !== 'object' || value === null) return replacement;
  const entries = Object.entries(value);
  if (entries.length === 0) return replacement;
  const [head, ...rest] = path;
  const index = head! % entries.length;
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...value };
  const key = entries[index]![0];
  (copy as Record<string, unknown>)[key] = replaceSomewhere(entries[index]![1], rest, replacement);
  return copy;
}

/** Reads a transcript; the only error it may throw is a TranscriptError naming the source. */
function readOrRefuse(text: string, source: string): void {
  let runs;
  try {
    runs = readTranscript(text, source);
  } catch (error) {
    expect(error).toBeInstanceOf(TranscriptError);
    expect((error as TranscriptError).message.startsWith(`${source}: `)).toBe(true);
    return;
  }
  const report = auditRuns(runs);
  expect(report.runs).toHaveLength(runs.length);
}

describe('the transcript readers under hostile input', () => {
  it('read any text, or refuse it with a TranscriptError naming the source', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('in.json', 'in.jsonl', 'in.txt'), (text, source) => {
        readOrRefuse(text, source);
      }),
      { numRuns: 300 },
    );
  });

  it('read a valid transcript after random edits, or refuse it with a TranscriptError', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SAMPLES), fc.array(textEdit, { minLength: 1, maxLength: 4 }), ([source, text], edits) => {
        readOrRefuse(applyEdits(text, edits), source);
      }),
      { numRuns: 400 },
    );
  });

  it('read a transcript with any JSON value in place of any part, or refuse it with a TranscriptError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SAMPLES.filter(([source]) => source.endsWith('.json'))),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.oneof(fc.jsonValue(), protoKeyedObject, hostileString),
        ([source, text], path, replacement) => {
          readOrRefuse(JSON.stringify(replaceSomewhere(JSON.parse(text), path, replacement)), source);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('read JSONL lines of any JSON values, or refuse them with a TranscriptError', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.jsonValue(),
            protoKeyedObject,
            fc.record(
              {
                type: fc.constantFrom('run', 'call', 'result', 'answer', 'clock', 'reset'),
                id: fc.jsonValue(),
                name: hostileString,
                outcome: fc.jsonValue(),
                advanceMs: fc.jsonValue(),
                text: fc.jsonValue(),
                args: hostileJsonArgs,
              },
              { requiredKeys: ['type'] },
            ),
          ),
          { maxLength: 8 },
        ),
        (lines) => {
          readOrRefuse(lines.map((line) => JSON.stringify(line) ?? 'undefined').join('\n'), 'in.jsonl');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuse deeply nested JSON with a TranscriptError, not a stack overflow', () => {
    readOrRefuse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'deep.json');
    readOrRefuse(`{"messages":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, 'deep.json');
  });

  it('read a huge tool argument without trouble', () => {
    const text = JSON.stringify([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'mystery', arguments: JSON.stringify({ action: HUGE }) } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ]);
    const runs = readTranscript(text, 'huge.json');
    expect(auditRuns(runs).runs[0]!.findings[0]!.decision?.kind).toBe('read');
  });
});
