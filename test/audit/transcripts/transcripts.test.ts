import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { MAX_NAME_LENGTH } from '../../../machines/safety.policy.js';
import { auditRuns } from '../../../src/audit/audit.js';
import { builtinCatalogs, compileCatalog } from '../../../src/classify/catalog/index.js';
import { MAX_RESULT_TEXT, readTranscript, type TranscriptRun, type TranscriptStep } from '../../../src/audit/transcripts/index.js';
import { TranscriptError } from '../../../src/errors/transcript-error.js';

/** A hand-written fixture in an agent's own log format (test/fixtures/native). */
function fixture(name: string): TranscriptRun[] {
  return readTranscript(readFileSync(new URL(`../../fixtures/native/${name}`, import.meta.url), 'utf8'), name);
}

const openAiChat = [
  { role: 'system', content: 'You are an agent.' },
  { role: 'user', content: 'Restart web-01.' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'a', type: 'function', function: { name: 'pulse_query', arguments: '{"query":"web-01"}' } },
      { id: 'b', type: 'function', function: { name: 'pulse_control', arguments: 'not json' } },
    ],
  },
  { role: 'tool', tool_call_id: 'a', name: 'pulse_query', content: '{"id":"web-01"}' },
  { role: 'tool', tool_call_id: 'b', content: 'Error: permission denied' },
  { role: 'assistant', content: 'Done.' },
];

/** JSONL text of this project's event lines. */
function jsonl(...lines: object[]): string {
  return lines.map((line) => JSON.stringify(line)).join('\n');
}

/** The call ids of a JSONL text's first run, step by step (null for a step without one). */
function idsOf(text: string): (string | null)[] {
  return readTranscript(text, 'ids.jsonl')[0]!.steps.map((step) => ('id' in step ? step.id : null));
}

function types(steps: TranscriptStep[]): string[] {
  return steps.map((step) => step.type);
}

describe('OpenAI chat messages', () => {
  test('a messages array is one run named after the source, with no reward', () => {
    const runs = readTranscript(JSON.stringify(openAiChat), 'chat.json');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.id).toBe('chat.json');
    expect(runs[0]!.reward).toBeNull();
  });

  test('tool calls become call steps with parsed arguments', () => {
    const [run] = readTranscript(JSON.stringify(openAiChat), 'chat.json');
    expect(run!.steps[0]).toMatchObject({ type: 'call', id: 'a', name: 'pulse_query', args: { query: 'web-01' } });
  });

  test('arguments that are not JSON are kept as the raw string', () => {
    const [run] = readTranscript(JSON.stringify(openAiChat), 'chat.json');
    expect(run!.steps[1]).toMatchObject({ type: 'call', id: 'b', args: 'not json' });
  });

  test('a tool output starting with Error is a failed call, anything else a success', () => {
    const [run] = readTranscript(JSON.stringify(openAiChat), 'chat.json');
    const results = run!.steps.filter((step) => step.type === 'result');
    expect(results.map((r) => (r.type === 'result' ? r.outcome : null))).toEqual(['success', 'error']);
  });

  test('a result without a name takes the name of its call', () => {
    const [run] = readTranscript(JSON.stringify(openAiChat), 'chat.json');
    expect(run!.steps[3]).toMatchObject({ type: 'result', id: 'b', name: 'pulse_control' });
  });

  test('an assistant text message without tool calls is an answer; system and user text are skipped', () => {
    const [run] = readTranscript(JSON.stringify(openAiChat), 'chat.json');
    expect(types(run!.steps)).toEqual(['call', 'call', 'result', 'result', 'answer']);
  });

  test('assistant text beside tool calls is not an answer', () => {
    const chat = [
      { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'x', function: { name: 'pulse_read', arguments: '{}' } }] },
    ];
    expect(types(readTranscript(JSON.stringify(chat), 'c.json')[0]!.steps)).toEqual(['call']);
  });

  test('an object with a messages array is one run, its id taken from the object', () => {
    const runs = readTranscript(JSON.stringify({ id: 'session-7', messages: openAiChat }), 'c.json');
    expect(runs.map((run) => run.id)).toEqual(['session-7']);
  });
});

describe('tau-bench runs', () => {
  const tau = [
    { task_id: 3, trial: 1, reward: 1.0, info: {}, traj: openAiChat },
    { task_id: 4, trial: 0, reward: 0.0, info: {}, traj: [{ role: 'assistant', content: 'Hello' }] },
  ];

  test('an array of runs gives one run each, named by task and trial', () => {
    const runs = readTranscript(JSON.stringify(tau), 'tau.json');
    expect(runs.map((run) => run.id)).toEqual(['task 3 trial 1', 'task 4 trial 0']);
  });

  test('each run keeps its reward', () => {
    expect(readTranscript(JSON.stringify(tau), 'tau.json').map((run) => run.reward)).toEqual([1, 0]);
  });

  test('positions name the run and the message', () => {
    const runs = readTranscript(JSON.stringify(tau), 'tau.json');
    expect(runs[1]!.steps[0]!.position).toBe('run 1, message 0');
  });
});

describe('Anthropic messages', () => {
  const anthropic = {
    messages: [
      { role: 'user', content: 'Restart web-01.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking it up.' },
          { type: 'tool_use', id: 'tu1', name: 'pulse_get_resource', input: { id: 'web-01' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'ok' }] }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'tu2', name: 'pulse_control', input: { action: 'restart' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu2', is_error: true, content: 'timeout' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It did not work.' }] },
    ],
  };

  test('tool_use blocks are calls with their input as arguments', () => {
    const [run] = readTranscript(JSON.stringify(anthropic), 'a.json');
    expect(run!.steps[0]).toMatchObject({ type: 'call', id: 'tu1', name: 'pulse_get_resource', args: { id: 'web-01' } });
  });

  test('tool_result blocks are results named after their call; is_error makes a failure', () => {
    const [run] = readTranscript(JSON.stringify(anthropic), 'a.json');
    const results = run!.steps.filter((step) => step.type === 'result');
    expect(results).toMatchObject([
      { id: 'tu1', name: 'pulse_get_resource', outcome: 'success' },
      { id: 'tu2', name: 'pulse_control', outcome: 'error' },
    ]);
  });

  test('an assistant message of text blocks only is an answer', () => {
    const [run] = readTranscript(JSON.stringify(anthropic), 'a.json');
    expect(types(run!.steps)).toEqual(['call', 'result', 'call', 'result', 'answer']);
    expect(run!.steps.at(-1)).toMatchObject({ type: 'answer', text: 'It did not work.' });
  });
});

describe('JSONL events', () => {
  const jsonl = [
    '{"type":"run","id":"one","reward":1}',
    '{"type":"call","id":"c1","name":"pulse_query","args":{"q":"x"}}',
    '',
    '{"type":"result","id":"c1","outcome":"success"}',
    '{"type":"answer","text":"hi"}',
    '{"type":"clock","advanceMs":600001}',
    '{"type":"resetKeepProgress"}',
    '{"type":"reset"}',
    '{"type":"run","id":"two"}',
    '{"type":"call","id":"c2","name":"pulse_control"}',
  ].join('\n');

  test('every event type is read, blank lines skipped, runs split by run events', () => {
    const runs = readTranscript(jsonl, 'events.jsonl');
    expect(runs.map((run) => [run.id, run.reward, types(run.steps)])).toEqual([
      ['one', 1, ['call', 'result', 'answer', 'clock', 'resetKeepProgress', 'reset']],
      ['two', null, ['call']],
    ]);
  });

  test('results take their call name; clocks keep their advance; positions are lines', () => {
    const [run] = readTranscript(jsonl, 'events.jsonl');
    expect(run!.steps[1]).toMatchObject({ type: 'result', name: 'pulse_query', position: 'line 4' });
    expect(run!.steps[3]).toMatchObject({ type: 'clock', advanceMs: 600001 });
  });

  test('JSONL is recognised from the content when the name does not say so', () => {
    expect(readTranscript(jsonl, 'events.txt')).toHaveLength(2);
  });

  test('events before any run event form one run named after the source', () => {
    const runs = readTranscript('{"type":"answer","text":"hi"}\n', 'x.log');
    expect(runs).toMatchObject([{ id: 'x.log', steps: [{ type: 'answer' }] }]);
  });
});

describe('bad input', () => {
  function errorOf(text: string, source: string): TranscriptError {
    try {
      readTranscript(text, source);
    } catch (error) {
      if (error instanceof TranscriptError) return error;
      throw error;
    }
    throw new Error('no error');
  }

  test('broken JSON is reported with the file, line and column', () => {
    const error = errorOf('[\n  {"role": "user",\n  "content": }\n]', 'broken.json');
    expect(error.message).toMatch(/^broken\.json: line 3, column \d+: not valid JSON/);
  });

  test('JSON nested too deep to locate its error is still reported, not thrown as a crash', () => {
    expect(errorOf('['.repeat(100_000), 'deep.json').message).toMatch(/^deep\.json: (top level|line 1, column \d+): not valid JSON/);
  });

  test('an empty file is reported', () => {
    expect(errorOf('  \n', 'empty.json').message).toBe('empty.json: line 1: the file is empty');
  });

  test('a message that is not an object is reported with its index', () => {
    expect(errorOf('[{"role":"user","content":"x"}, 42]', 'm.json').message).toBe('m.json: message 1: a message must be an object');
  });

  test('a message without a role is reported', () => {
    expect(errorOf('[{"content":"x"}]', 'm.json').message).toContain('needs a string "role"');
  });

  test('a tool call without an id or function name is reported', () => {
    const chat = [{ role: 'assistant', tool_calls: [{ function: { arguments: '{}' } }] }];
    expect(errorOf(JSON.stringify(chat), 'm.json').message).toBe(
      'm.json: message 0: tool_calls[0] needs a string "id" and "function.name"',
    );
  });

  test('a run without a traj or messages array is reported with the run index', () => {
    expect(errorOf('[{"task_id":1,"traj":[]},{"task_id":2}]', 't.json').message).toBe(
      't.json: run 1: a run needs a "traj" or "messages" array',
    );
  });

  test('a top-level value that is no transcript is reported', () => {
    expect(errorOf('42', 'n.json').message).toBe('n.json: top level: expected a run object or an array of messages');
  });

  test('a bad JSONL line is reported with its line number', () => {
    expect(errorOf('{"type":"answer","text":"a"}\n{"type":"call","id":"c1"}\n', 'e.jsonl').message).toBe(
      'e.jsonl: line 2: a "call" event needs a non-empty string "name"',
    );
  });

  test('an unknown JSONL event type is reported', () => {
    expect(errorOf('{"type":"teleport"}', 'e.jsonl').message).toMatch(/^e\.jsonl: line 1: "type" must be one of/);
  });

  test('a JSONL result with an unknown outcome is reported', () => {
    expect(errorOf('{"type":"result","id":"c","outcome":"maybe"}', 'e.jsonl').message).toBe(
      'e.jsonl: line 1: "outcome" must be "success" or "error"',
    );
  });

  test('a negative clock advance is reported', () => {
    expect(errorOf('{"type":"clock","advanceMs":-5}', 'e.jsonl').message).toContain('non-negative number "advanceMs"');
  });
});

describe('names and ids longer than the gate keeps (MAX_NAME_LENGTH)', () => {
  const long = 'n'.repeat(MAX_NAME_LENGTH + 100);

  test('a JSONL call and its result take MAX_NAME_LENGTH characters (the name its first ones, the id made up), so the run can be audited', () => {
    const text = [
      JSON.stringify({ type: 'call', id: long, name: long }),
      JSON.stringify({ type: 'result', id: long, outcome: 'success' }),
    ].join('\n');
    const [run] = readTranscript(text, 'long.jsonl');
    expect(run!.steps.map((step) => ('name' in step ? [step.id.length, step.name.length] : null))).toEqual([
      [MAX_NAME_LENGTH, MAX_NAME_LENGTH],
      [MAX_NAME_LENGTH, MAX_NAME_LENGTH],
    ]);
    expect(auditRuns([run!]).runs[0]!.calls).toBe(1);
  });

  test('an OpenAI chat tool call is read the same way', () => {
    const text = JSON.stringify([
      { role: 'assistant', content: null, tool_calls: [{ id: long, type: 'function', function: { name: long, arguments: '{}' } }] },
    ]);
    const [run] = readTranscript(text, 'long.json');
    expect(run!.steps[0]).toMatchObject({
      type: 'call',
      id: `${long.slice(0, MAX_NAME_LENGTH - 3)}…#1`,
      name: long.slice(0, MAX_NAME_LENGTH),
    });
  });

  test('two long call ids sharing their first characters stay two ids, each with its own result', () => {
    const [a, b] = [`${long}a`, `${long}b`];
    const text = jsonl(
      { type: 'call', id: a, name: 'x' },
      { type: 'call', id: b, name: 'y' },
      { type: 'result', id: b, outcome: 'success' },
      { type: 'result', id: a, outcome: 'error' },
    );
    const ids = idsOf(text);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids).toEqual([ids[0], ids[1], ids[1], ids[0]]);
    expect(ids.every((id) => id!.length === MAX_NAME_LENGTH)).toBe(true);
  });

  test("a log's own id of MAX_NAME_LENGTH characters in the made-up form is made up too, so it never takes another's", () => {
    const first = `${long}a`;
    const lookalike = `${long.slice(0, MAX_NAME_LENGTH - 3)}…#1`;
    const text = jsonl({ type: 'call', id: first, name: 'x' }, { type: 'call', id: lookalike, name: 'y' });
    const [one, two] = idsOf(text);
    expect(one).toBe(lookalike);
    expect(two).not.toBe(one);
    expect(two).toHaveLength(MAX_NAME_LENGTH);
  });

  test('an id shorter than MAX_NAME_LENGTH, or of that length in no made-up form, is kept as it is', () => {
    const exact = 'e'.repeat(MAX_NAME_LENGTH);
    expect(idsOf(jsonl({ type: 'call', id: exact, name: 'x' }, { type: 'call', id: 'short', name: 'x' }))).toEqual([exact, 'short']);
  });

  test('a long id checked twice before its results keeps its made-up id until both results are in', () => {
    const a = `${long}a`;
    const text = jsonl(
      { type: 'call', id: a, name: 'x' },
      { type: 'call', id: a, name: 'x' },
      { type: 'result', id: a, outcome: 'success' },
      { type: 'result', id: a, outcome: 'success' },
      { type: 'call', id: a, name: 'x' },
    );
    const ids = idsOf(text);
    expect(new Set(ids.slice(0, 4)).size).toBe(1);
    expect(ids[4]).not.toBe(ids[0]);
  });

  test("an audit of long ids reused while in flight reports as the same log with short ids (no result settles another's call)", () => {
    const [a, b, r] = [`${'p'.repeat(509)}${'a'.repeat(100)}`, `${'p'.repeat(509)}${'b'.repeat(100)}`, 'r1'];
    const log = (idA: string, idB: string) =>
      jsonl(
        { type: 'call', id: r, name: 'Read', args: { file_path: '/tmp/f' } },
        { type: 'result', id: r, outcome: 'success' },
        { type: 'call', id: idA, name: 'Read', args: { file_path: '/tmp/f' } },
        { type: 'call', id: idA, name: 'Read', args: { file_path: '/tmp/f' } },
        { type: 'call', id: idB, name: 'Edit', args: { file_path: '/tmp/f', old_string: 'a', new_string: 'b' } },
        { type: 'result', id: idA, outcome: 'success' },
        { type: 'result', id: idA, name: 'Edit', outcome: 'error' },
        { type: 'answer', text: 'Done.' },
        { type: 'result', id: idB, outcome: 'success' },
      );
    const catalog = compileCatalog(builtinCatalogs['claude-code']);
    const report = (text: string) => {
      const audit = auditRuns(readTranscript(text, 'log.jsonl'), { catalog }).runs[0]!;
      return {
        refusals: audit.refusals.map((x) => [x.subject, x.rule, x.position]),
        endsUnverified: audit.endsUnverified,
        state: audit.finalState,
      };
    };
    expect(report(log('A', 'B')).refusals).toEqual([['answer', 'write-in-flight', 'line 8']]);
    expect(report(log(a, b))).toEqual(report(log('A', 'B')));
  });

  test('an audit of long write ids keeps them apart: the answer while one write is in flight is refused', () => {
    const log = (w1: string, w2: string) =>
      jsonl(
        { type: 'call', id: 'q', name: 'pulse_query', args: { query: 'web-01' } },
        { type: 'result', id: 'q', outcome: 'success' },
        { type: 'call', id: w1, name: 'pulse_control', args: { action: 'restart', target: 'web-01' } },
        { type: 'call', id: w2, name: 'pulse_control', args: { action: 'stop', target: 'web-01' } },
        { type: 'result', id: w2, outcome: 'success' },
        { type: 'call', id: 'r', name: 'pulse_query', args: { query: 'web-01' } },
        { type: 'result', id: 'r', outcome: 'success' },
        { type: 'answer', text: 'web-01 restarted and verified' },
        { type: 'result', id: w1, outcome: 'success' },
      );
    const summary = (text: string) => {
      const audit = auditRuns(readTranscript(text, 'log.jsonl')).runs[0]!;
      return [audit.blockedCalls, audit.refusedAnswers, audit.recoveries, audit.refusals.map((r) => r.rule)];
    };
    expect(summary(log('w1', 'w2'))).toEqual([1, 1, 0, ['write-in-flight', 'write-in-flight']]);
    expect(summary(log(`${'w'.repeat(600)}1`, `${'w'.repeat(600)}2`))).toEqual(summary(log('w1', 'w2')));
  });
});

describe('robustness', () => {
  const deep = '['.repeat(5_000) + ']'.repeat(5_000);

  test('a UTF-8 byte-order mark before the JSON is ignored', () => {
    expect(readTranscript('\uFEFF' + JSON.stringify(openAiChat), 'bom.json')).toHaveLength(1);
  });

  test('arguments nested too deep to report are kept as their raw string', () => {
    const chat = [{ role: 'assistant', tool_calls: [{ id: 'd', function: { name: 'x', arguments: deep } }] }];
    const [run] = readTranscript(JSON.stringify(chat), 'deep.json');
    expect(run!.steps[0]).toMatchObject({ type: 'call', args: deep });
    expect(() => JSON.stringify(run)).not.toThrow();
  });

  test('inline arguments nested too deep are replaced by a note', () => {
    const [run] = readTranscript(`{"type":"call","id":"c","name":"x","args":${deep}}`, 'deep.jsonl');
    expect(run!.steps[0]).toMatchObject({ type: 'call', args: '[arguments nested deeper than 64 levels]' });
  });

  test('log lines wrapping log lines thousands deep are refused with a TranscriptError, not a stack overflow', () => {
    const depth = 20_000;
    const claude = `${'{"type":"user","message":'.repeat(depth)}{"role":"user","content":"x"}${'}'.repeat(depth)}`;
    const codex = `${'{"type":"response_item","payload":'.repeat(depth)}{"type":"function_call","call_id":"c","name":"x"}${'}'.repeat(depth)}`;
    expect(() => readTranscript(claude, 'deep.json')).toThrow(TranscriptError);
    expect(() => readTranscript(`${codex}\n${codex}`, 'deep.jsonl')).toThrow(TranscriptError);
  });

  test('call ids are per run: a result in a later run does not take a name from an earlier one', () => {
    const runs = readTranscript(
      [
        '{"type":"run","id":"one"}',
        '{"type":"call","id":"c2","name":"pulse_control"}',
        '{"type":"run","id":"two"}',
        '{"type":"result","id":"c2","outcome":"success"}',
      ].join('\n'),
      'r.jsonl',
    );
    expect(runs[1]!.steps[0]).toMatchObject({ type: 'result', id: 'c2', name: '' });
  });
});

/** The call and result steps of a run, as [type, name, outcome?] for a compact comparison. */
function traffic(steps: TranscriptStep[]): string[] {
  return steps.flatMap((step) =>
    step.type === 'call' ? [`call ${step.name}`] : step.type === 'result' ? [`${step.outcome} ${step.name}`] : [],
  );
}

function argsOf(steps: TranscriptStep[]): unknown[] {
  return steps.flatMap((step) => (step.type === 'call' ? [step.args] : []));
}

describe('Claude Code session JSONL', () => {
  const runs = fixture('claude-code-session.jsonl');
  const main = runs[0]!;

  test('is read, one run per session named by its sessionId, a subagent sidechain a run of its own', () => {
    expect(runs.map((run) => run.id)).toEqual([
      '5b7c2e1a-93d4-4f0e-8a61-2c9e7f1d0b34',
      '5b7c2e1a-93d4-4f0e-8a61-2c9e7f1d0b34 agent 9c1e2f30',
    ]);
  });

  test('tool_use blocks are calls with their input as arguments', () => {
    expect(main.steps[0]).toMatchObject({
      type: 'call',
      id: 'toolu_01StatusA1',
      name: 'Bash',
      args: { command: 'git status --short' },
      position: 'line 5',
    });
  });

  test('each call carries the cwd of its line', () => {
    const cwds = main.steps.flatMap((step) => (step.type === 'call' ? [step.cwd] : []));
    expect(cwds).toEqual([
      '/home/dev/projects/inventory-api',
      '/home/dev/projects/inventory-api',
      '/home/dev/projects/inventory-api/deploy',
    ]);
  });

  test('tool_result with is_error is a failure, the others successes', () => {
    expect(traffic(main.steps)).toEqual(['call Bash', 'success Bash', 'call Bash', 'error Bash', 'call Read']);
  });

  test("a result keeps the tool's text", () => {
    expect(main.steps[3]).toMatchObject({ type: 'result', text: expect.stringContaining('fatal: Authentication failed') });
  });

  test('text streamed before a tool_use of the same message is no answer; the end-of-turn text is', () => {
    expect(types(main.steps)).toEqual(['call', 'result', 'call', 'result', 'answer', 'call']);
    expect(main.steps[4]).toMatchObject({ type: 'answer', text: expect.stringMatching(/^The commit is made locally/) });
  });

  test("the client's own API-error message is no answer", () => {
    expect(main.steps.some((step) => step.type === 'answer' && step.text.startsWith('API Error'))).toBe(false);
  });

  test('is recognised from its content under any name', () => {
    const text = readFileSync(new URL('../../fixtures/native/claude-code-session.jsonl', import.meta.url), 'utf8');
    expect(readTranscript(text, 'session.log').map((run) => run.steps.length)).toEqual(runs.map((run) => run.steps.length));
  });

  test('stream-json output: calls take the cwd of the init line', () => {
    const lines = [
      { type: 'system', subtype: 'init', cwd: '/srv/app', session_id: 's-1', tools: ['Bash'], model: 'claude-sonnet-4-5' },
      {
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'tool_use', id: 'tu', name: 'Bash', input: { command: 'ls' } }] },
        session_id: 's-1',
      },
      {
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu', content: 'a\nb' }] },
        session_id: 's-1',
      },
      { type: 'result', subtype: 'success', is_error: false, result: 'done', session_id: 's-1' },
    ];
    const [run] = readTranscript(lines.map((line) => JSON.stringify(line)).join('\n'), 'stream.jsonl');
    expect(run).toMatchObject({
      id: 's-1',
      steps: [
        { type: 'call', cwd: '/srv/app' },
        { type: 'result', outcome: 'success' },
      ],
    });
  });
});

describe('Gemini CLI chat history (checkpoint)', () => {
  const [run] = fixture('gemini-cli-checkpoint.json');

  test('functionCall parts are calls: the DROP TABLE query is found', () => {
    expect(argsOf(run!.steps)).toContainEqual({ sql: 'DROP TABLE staging_orders;' });
    expect(traffic(run!.steps).filter((entry) => entry.startsWith('call'))).toEqual([
      'call run_shell_command',
      'call query',
      'call run_shell_command',
    ]);
  });

  test('calls without ids get ids by order, and each functionResponse pairs with its call', () => {
    const calls = run!.steps.filter((step) => step.type === 'call').map((step) => (step.type === 'call' ? step.id : ''));
    const results = run!.steps.filter((step) => step.type === 'result').map((step) => (step.type === 'result' ? step.id : ''));
    expect(new Set(calls).size).toBe(3);
    expect(results).toEqual(calls);
  });

  test('a run_shell_command result with Exit Code: 1 is a failure; Exit Code: 0 a success', () => {
    expect(traffic(run!.steps)).toEqual([
      'call run_shell_command',
      'success run_shell_command',
      'call query',
      'success query',
      'call run_shell_command',
      'error run_shell_command',
    ]);
  });

  test('model text without a functionCall is an answer; thought parts are not', () => {
    expect(run!.steps.filter((step) => step.type === 'answer').map((step) => (step.type === 'answer' ? step.text : ''))).toEqual([
      'Got it. Thanks for the context!',
      'staging_orders is dropped. Compacting staging_events failed: the disk is full.',
    ]);
  });

  test('an object { history } is read the same', () => {
    const history = JSON.parse(
      readFileSync(new URL('../../fixtures/native/gemini-cli-checkpoint.json', import.meta.url), 'utf8'),
    ) as unknown[];
    expect(types(readTranscript(JSON.stringify({ history }), 'h.json')[0]!.steps)).toEqual(types(run!.steps));
  });

  test('a response without an id answers the oldest open call of its name', () => {
    const history = [
      {
        role: 'model',
        parts: [{ functionCall: { name: 'read_file', args: { path: 'a' } } }, { functionCall: { name: 'read_file', args: { path: 'b' } } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'read_file', response: { output: 'A' } } },
          { functionResponse: { name: 'read_file', response: { error: 'no b' } } },
        ],
      },
    ];
    const [only] = readTranscript(JSON.stringify(history), 'g.json');
    expect(only!.steps.map((step) => (step.type === 'result' ? `${step.id} ${step.outcome}` : step.type))).toEqual([
      'call',
      'call',
      'functionCall#1 success',
      'functionCall#2 error',
    ]);
  });
});

describe('Gemini CLI session file', () => {
  const [run] = fixture('gemini-cli-session.json');

  test('is one run named by its sessionId', () => {
    expect(run!.id).toBe('3e8a5d21-7c44-4b9f-a1d0-6f2b9c8e4a17');
  });

  test("a message's calls all come before their results", () => {
    expect(traffic(run!.steps).slice(0, 4)).toEqual([
      'call write_file',
      'call run_shell_command',
      'success write_file',
      'error run_shell_command',
    ]);
  });

  test('status "success" with Exit Code: 2 in the output is a failure', () => {
    expect(run!.steps[3]).toMatchObject({
      type: 'result',
      name: 'run_shell_command',
      outcome: 'error',
      text: expect.stringContaining('Exit Code: 2'),
    });
  });

  test('a call the user cancelled is a failure (it never ran)', () => {
    expect(traffic(run!.steps).slice(4)).toEqual(['call run_shell_command', 'error run_shell_command']);
  });

  test('a preamble followed by tool calls in the same turn is no answer; the closing text is', () => {
    expect(types(run!.steps)).toEqual(['call', 'call', 'result', 'result', 'call', 'result', 'answer']);
  });
});

describe('OpenAI legacy function_call', () => {
  const [run] = fixture('openai-legacy-functions.json');

  test('function_call messages are calls: the DROP TABLE query is found', () => {
    expect(argsOf(run!.steps)).toEqual([{ query: 'SELECT count(*) FROM audit_log' }, { query: 'DROP TABLE audit_log' }]);
  });

  test('function messages answer the calls in order, by name', () => {
    const ids = run!.steps.flatMap((step) => (step.type === 'call' || step.type === 'result' ? [step.id] : []));
    expect(ids).toEqual(['function_call#1', 'function_call#1', 'function_call#2', 'function_call#2']);
  });

  test('an ERROR output is a failure; the closing text an answer', () => {
    expect(types(run!.steps)).toEqual(['call', 'result', 'call', 'result', 'answer']);
    expect(traffic(run!.steps)).toEqual(['call run_sql', 'success run_sql', 'call run_sql', 'error run_sql']);
  });
});

describe('OpenAI Responses items', () => {
  const [run] = fixture('openai-responses.json');

  test('function_call items are calls with parsed arguments; outputs pair by call_id', () => {
    expect(run!.steps[0]).toMatchObject({ type: 'call', id: 'call_Rk2vStatus', name: 'run_command', args: { command: 'git status -sb' } });
    expect(run!.steps[1]).toMatchObject({ type: 'result', id: 'call_Rk2vStatus', name: 'run_command', outcome: 'success' });
  });

  test('a git push output with fatal: Authentication failed and exit status 128 is a failure', () => {
    expect(run!.steps[3]).toMatchObject({ type: 'result', id: 'call_Rk2vPush', outcome: 'error' });
  });

  test('input then output; a preamble before a call is no answer, reasoning is skipped, the output message is the answer', () => {
    expect(types(run!.steps)).toEqual(['call', 'result', 'call', 'result', 'answer']);
    expect(run!.steps[4]).toMatchObject({ text: 'The push was rejected: authentication failed.', position: 'message 7' });
  });

  test('a hosted mcp_call is a call and its result at once; its error makes a failure', () => {
    const items = [
      {
        type: 'mcp_call',
        id: 'mcp_1',
        name: 'delete_branch',
        server_label: 'git',
        arguments: '{"branch":"old"}',
        output: null,
        error: 'forbidden',
      },
    ];
    expect(traffic(readTranscript(JSON.stringify(items), 'm.json')[0]!.steps)).toEqual(['call delete_branch', 'error delete_branch']);
  });
});

describe('Codex rollout JSONL', () => {
  const [run] = fixture('codex-rollout.jsonl');

  test('is one run named by its session_meta id', () => {
    expect(run!.id).toBe('0199ecf2-5a3b-7c10-9d2e-4f6a8b0c1d2e');
  });

  test('calls carry the session cwd, then the cwd of a later turn', () => {
    expect(run!.steps.flatMap((step) => (step.type === 'call' ? [step.cwd] : []))).toEqual([
      '/home/dev/projects/ledger',
      '/home/dev/projects/ledger',
      '/home/dev/projects/ledger/crates/core',
    ]);
  });

  test('shell output with metadata.exit_code 101 is a failure; exit_code 0 a success', () => {
    expect(traffic(run!.steps)).toEqual([
      'call shell',
      'error shell',
      'call apply_patch',
      'success apply_patch',
      'call shell',
      'success shell',
    ]);
  });

  test('a custom tool call keeps its free-form input as the arguments', () => {
    expect(run!.steps[2]).toMatchObject({ type: 'call', name: 'apply_patch', args: expect.stringMatching(/^\*\*\* Begin Patch/) });
  });

  test('event_msg lines are skipped: the answer is read once, from its response_item', () => {
    expect(types(run!.steps)).toEqual(['call', 'result', 'call', 'result', 'call', 'result', 'answer']);
  });
});

describe('result text and working directories', () => {
  test('a result keeps at most MAX_RESULT_TEXT characters of its text', () => {
    const chat = [
      { role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'pulse_read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'z'.repeat(MAX_RESULT_TEXT * 3) },
    ];
    const result = readTranscript(JSON.stringify(chat), 'big.json')[0]!.steps[1];
    expect(result?.type === 'result' ? result.text.length : -1).toBe(MAX_RESULT_TEXT);
  });

  test('JSONL events: a result may carry its text, a call its cwd', () => {
    const [run] = readTranscript(
      [
        '{"type":"call","id":"c","name":"run_command","args":{},"cwd":"/srv"}',
        '{"type":"result","id":"c","outcome":"success","text":"ok"}',
      ].join('\n'),
      'e.jsonl',
    );
    expect(run!.steps).toMatchObject([
      { type: 'call', cwd: '/srv' },
      { type: 'result', text: 'ok' },
    ]);
  });

  test('JSONL events without text or cwd: text is empty and cwd absent', () => {
    const [run] = readTranscript('{"type":"call","id":"c","name":"x"}\n{"type":"result","id":"c","outcome":"success"}', 'e.jsonl');
    expect(run!.steps[0]).not.toHaveProperty('cwd');
    expect(run!.steps[1]).toMatchObject({ text: '' });
  });

  test("a catalog's failure markers are applied when given", () => {
    const chat = [
      { role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'run_tests', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'FAILED tests/test_api.py::test_login' },
    ];
    const outcome = (options?: { failureMarkers: string[] }) => {
      const step = readTranscript(JSON.stringify(chat), 'f.json', options)[0]!.steps[1];
      return step?.type === 'result' ? step.outcome : null;
    };
    expect([outcome(), outcome({ failureMarkers: ['FAILED'] })]).toEqual(['success', 'error']);
  });
});

describe('nothing recognised', () => {
  function errorOf(text: string, source: string): TranscriptError {
    try {
      readTranscript(text, source);
    } catch (error) {
      if (error instanceof TranscriptError) return error;
      throw error;
    }
    throw new Error('no error');
  }

  test('a file in which no call and no answer is recognised is refused with one line, never read as an empty run', () => {
    const error = errorOf('[{"type":"turn","speaker":"bot","said":"hi"}]', 'other.json');
    expect(error.message).toMatch(
      /^other\.json: top level: no tool call and no final answer recognised: not a supported transcript format/,
    );
    expect(error.message).not.toContain('\n');
  });

  test('a chat of user messages only is refused the same way', () => {
    expect(errorOf('[{"role":"user","content":"hello?"}]', 'u.json').message).toContain('no tool call and no final answer recognised');
  });

  test('an empty run beside runs with steps is fine', () => {
    const runs = readTranscript(
      JSON.stringify([
        { task_id: 1, traj: [] },
        { task_id: 2, traj: [{ role: 'assistant', content: 'Hi' }] },
      ]),
      't.json',
    );
    expect(runs.map((run) => run.steps.length)).toEqual([0, 1]);
  });
});
