import { describe, expect, test } from 'vitest';
import { readTranscript, TranscriptError, type TranscriptStep } from '../src/transcripts.js';

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

  test('call ids are per run: a result in a later run does not take a name from an earlier one', () => {
    const runs = readTranscript(
      ['{"type":"run","id":"one"}', '{"type":"call","id":"c2","name":"pulse_control"}', '{"type":"run","id":"two"}', '{"type":"result","id":"c2","outcome":"success"}'].join('\n'),
      'r.jsonl',
    );
    expect(runs[1]!.steps[0]).toMatchObject({ type: 'result', id: 'c2', name: '' });
  });
});
