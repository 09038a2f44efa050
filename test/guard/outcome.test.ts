/**
 * Reading a tool call's failure from its result (src/guard/outcome.ts, DESIGN §5.7):
 * each failure form, each success form (false-positive traps included),
 * catalog markers, and results that cannot be read.
 */
import { describe, expect, test } from 'vitest';
import { DEFAULT_FAILURE_MARKERS, failureReason, MAX_SCANNED_TEXT, outcomeOf, resultText } from '../../src/guard/outcome.js';

/** Gemini CLI's run_shell_command output. */
function geminiShell(output: string, exitCode: string): string {
  return [
    'Command: make build',
    'Directory: (root)',
    `Output: ${output}`,
    'Error: (none)',
    `Exit Code: ${exitCode}`,
    'Signal: (none)',
    'Background PIDs: (none)',
    'Process Group PGID: 4242',
  ].join('\n');
}

describe('the format says it failed', () => {
  test('an Anthropic tool_result with is_error: true', () => {
    expect(outcomeOf({ type: 'tool_result', tool_use_id: 't', content: 'timed out', is_error: true })).toBe('error');
  });

  test('an MCP CallToolResult with isError: true', () => {
    expect(outcomeOf({ content: [{ type: 'text', text: 'no such host' }], isError: true })).toBe('error');
  });

  test('a tool message with status "error"', () => {
    expect(outcomeOf({ role: 'tool', tool_call_id: 'c', content: 'not allowed', status: 'error' })).toBe('error');
  });

  test('an AI SDK error-text output', () => {
    expect(outcomeOf({ type: 'error-text', value: 'rate limited' })).toBe('error');
  });

  test('an AI SDK error-json output', () => {
    expect(outcomeOf({ type: 'error-json', value: { code: 429 } })).toBe('error');
  });

  test('a Gemini functionResponse whose response has an error', () => {
    expect(outcomeOf({ functionResponse: { name: 'read_file', response: { error: 'File not found: notes.md' } } })).toBe('error');
  });

  test('a Gemini functionResponse part inside a parts array', () => {
    expect(outcomeOf([{ functionResponse: { name: 'write_file', response: { error: 'Permission denied' } } }])).toBe('error');
  });
});

describe('a non-zero exit code', () => {
  test('Gemini CLI shell output with Exit Code: 1', () => {
    expect(outcomeOf(geminiShell('make: *** [build] Error 1', '1'))).toBe('error');
  });

  test('a Go-style "exit status 128" after the output', () => {
    expect(outcomeOf('To https://git.example.invalid/acme/app.git\n ! [rejected] main -> main\nexit status 128')).toBe('error');
  });

  test('git push text with fatal: Authentication failed and exit status 128', () => {
    const text = "fatal: Authentication failed for 'https://git.example.invalid/acme/app.git/'\nexit status 128";
    expect(failureReason(text)).toBe('exit code 128');
  });

  test('"exit code: 2" in running text', () => {
    expect(outcomeOf('Build step "lint" failed with exit code: 2')).toBe('error');
  });

  test('a Codex header "Process exited with code 1"', () => {
    expect(outcomeOf('Chunk ID: 7a\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\nno tests ran')).toBe('error');
  });

  test('Python\'s "returned non-zero exit status 1"', () => {
    expect(outcomeOf("Command '['pytest']' returned non-zero exit status 1.")).toBe('error');
  });

  test('a Gemini CLI command killed by a signal', () => {
    expect(outcomeOf(geminiShell('(empty)', '(none)').replace('Signal: (none)', 'Signal: 15'))).toBe('error');
  });

  test('a JSON exit_code field', () => {
    expect(outcomeOf({ stdout: '', stderr: 'boom', exit_code: 3 })).toBe('error');
  });

  test('a JSON exitCode field', () => {
    expect(outcomeOf({ exitCode: 1, output: '' })).toBe('error');
  });

  test('a JSON returncode field given as a numeric string', () => {
    expect(outcomeOf({ returncode: '2' })).toBe('error');
  });

  test('Codex shell output: a JSON string with metadata.exit_code', () => {
    expect(outcomeOf('{"output":"error: could not compile `ledger`\\n","metadata":{"exit_code":101,"duration_seconds":3.1}}')).toBe(
      'error',
    );
  });
});

describe('a JSON object with an error member', () => {
  test('as an object', () => {
    expect(outcomeOf({ error: { code: 'ENOENT', message: 'no such file' } })).toBe('error');
  });

  test('as text', () => {
    expect(outcomeOf('{"error": "reservation not found"}')).toBe('error');
  });

  test('as text after a prefix: the text from the first { to the end is one object', () => {
    expect(outcomeOf('Response: {"error": "quota exceeded", "status": 429}')).toBe('error');
  });

  test('as a tool message whose content is that JSON', () => {
    expect(outcomeOf({ role: 'tool', tool_call_id: 'c', content: '{"error":"invalid id"}' })).toBe('error');
  });
});

describe('a failure marker at the start', () => {
  test.each(DEFAULT_FAILURE_MARKERS.map((marker) => [marker]))('"%s"', (marker) => {
    expect(outcomeOf(`${marker} something went wrong`)).toBe('error');
  });

  test('after leading whitespace', () => {
    expect(outcomeOf('\n   fatal: not a git repository')).toBe('error');
  });

  test("at the start of an MCP content array's text", () => {
    expect(outcomeOf({ content: [{ type: 'text', text: 'Error: table "users" does not exist' }] })).toBe('error');
  });

  test('the default markers are Error, error:, fatal:, ERROR and a Python traceback', () => {
    expect(DEFAULT_FAILURE_MARKERS).toEqual(['Error', 'error:', 'fatal:', 'ERROR', 'Traceback (most recent call last):']);
  });
});

describe('no result at all', () => {
  test('an Error, what the tool threw, is a failure', () => {
    expect(failureReason(new TypeError('fetch failed'))).toBe('a thrown TypeError');
  });

  test('a Promise, a result not awaited, is a failure', () => {
    expect(outcomeOf(Promise.resolve('ok'))).toBe('error');
  });

  test('status "failed" is a failure', () => {
    expect(outcomeOf({ status: 'failed', job: 'deploy' })).toBe('error');
  });
});

describe('a JSON envelope that says it failed', () => {
  test('ok: false', () => {
    expect(outcomeOf({ ok: false, reason: 'quota' })).toBe('error');
  });

  test('success: false, as text', () => {
    expect(outcomeOf('{"success": false, "message": "reservation is locked"}')).toBe('error');
  });

  test("the gate's own FSM_BLOCKED result", () => {
    expect(outcomeOf({ ok: false, error: { code: 'FSM_BLOCKED', blocked: true } })).toBe('error');
  });

  test('ok: true is a success', () => {
    expect(outcomeOf({ ok: true, rows: [] })).toBe('success');
  });
});

describe('a command-line diagnostic as the first line', () => {
  test.each([
    ['bash: kubectl: command not found'],
    ['sh: 1: psql: not found'],
    ['cat: /etc/app.conf: No such file or directory'],
    ["rm: cannot remove '/var/data': Permission denied"],
    ['ls: /root: Permission denied'],
    ["cp: cannot stat 'a.txt': No such file or directory"],
  ])('%s', (text) => {
    expect(failureReason(`${text}\n`)).toMatch(/^a command-line diagnostic/);
  });

  test('a diagnostic further down the output is not one (only the first line speaks for the command)', () => {
    expect(outcomeOf("total 8\nls: cannot access 'x': No such file or directory")).toBe('success');
  });

  test('prose that merely mentions "not found" is not one', () => {
    expect(outcomeOf('Search results: 3 items, the page you asked for was not found')).toBe('success');
  });
});

describe('catalog markers', () => {
  test('a marker given in options makes a failure', () => {
    expect(outcomeOf('FAILED tests/test_app.py::test_login', { failureMarkers: ['FAILED'] })).toBe('error');
  });

  test('without the option the same text is a success', () => {
    expect(outcomeOf('FAILED tests/test_app.py::test_login')).toBe('success');
  });

  test('markers given in options add to the defaults, not replace them', () => {
    expect(outcomeOf('fatal: bad revision', { failureMarkers: ['FAILED'] })).toBe('error');
  });

  test('an empty marker is ignored (it would match every text)', () => {
    expect(outcomeOf('all good', { failureMarkers: [''] })).toBe('success');
  });

  test('markers that are not strings, or not a list, are ignored', () => {
    expect(outcomeOf('all good', { failureMarkers: [42, null] as unknown as string[] })).toBe('success');
    expect(outcomeOf('all good', { failureMarkers: 'all' as unknown as string[] })).toBe('success');
  });

  test('a marker is case-sensitive', () => {
    expect(outcomeOf('failed: 0 tests', { failureMarkers: ['FAILED'] })).toBe('success');
  });
});

describe('successes, false-positive traps included', () => {
  test('plain output', () => {
    expect(outcomeOf('3 files changed')).toBe('success');
  });

  test('a file whose fortieth line says "error" (a cat of a log)', () => {
    const lines = Array.from({ length: 60 }, (_, i) => (i === 39 ? 'error: disk quota exceeded on /var' : `line ${i + 1}`));
    expect(outcomeOf(lines.join('\n'))).toBe('success');
  });

  test('a marker that is not at the start', () => {
    expect(outcomeOf('warning: see the fatal: lines below')).toBe('success');
  });

  test('Gemini CLI output with Exit Code: 0 (its "Error: (none)" line is no failure)', () => {
    expect(outcomeOf(geminiShell('ok', '0'))).toBe('success');
  });

  test('Gemini CLI output with Exit Code: 0 although the output mentions "exit status 2"', () => {
    expect(outcomeOf(geminiShell('retrying after exit status 2 ... done', '0'))).toBe('success');
  });

  test('a Codex header with exit code 0 decides, whatever the output below says', () => {
    expect(outcomeOf('Exit code: 0\nWall time: 1.1 seconds\nOutput:\nstep 3: exit code: 1 (ignored)\nall done')).toBe('success');
  });

  test('"exit codes" without a number', () => {
    expect(outcomeOf('Exit codes: see the manual')).toBe('success');
  });

  test('"exit status 0"', () => {
    expect(outcomeOf('child finished: exit status 0')).toBe('success');
  });

  test('JSON whose error member is null, false, empty or zero', () => {
    for (const error of [null, false, '', 0, {}, []]) expect(outcomeOf({ ok: true, error })).toBe('success');
  });

  test('JSON text with exit_code 0', () => {
    expect(outcomeOf('{"output":"12 passed","metadata":{"exit_code":0}}')).toBe('success');
  });

  test('a list of records with error fields is data, not a failure', () => {
    expect(
      outcomeOf([
        { id: 1, error: 'disk full' },
        { id: 2, error: null },
      ]),
    ).toBe('success');
  });

  test('JSON text followed by more text is not read as JSON', () => {
    expect(outcomeOf('{"error": "old"} and then it recovered')).toBe('success');
  });

  test('a JSON array of objects with error members is not an object', () => {
    expect(outcomeOf('[{"error": "one"}, {"error": "two"}]')).toBe('success');
  });

  test('is_error: false with ordinary text', () => {
    expect(outcomeOf({ type: 'tool_result', tool_use_id: 't', content: 'ok', is_error: false })).toBe('success');
  });

  test('a result with nothing in it', () => {
    for (const result of [undefined, null, '', 0, true, {}, []]) expect(outcomeOf(result)).toBe('success');
  });
});

describe('results that cannot be read', () => {
  test('a throwing getter is an error, not an exception', () => {
    const result = {
      get content(): string {
        throw new Error('boom');
      },
    };
    expect(outcomeOf(result)).toBe('error');
    expect(failureReason(result)).toBe('result unreadable');
  });

  test('a proxy whose every trap throws is an error', () => {
    const trap = () => {
      throw new Error('trap');
    };
    const hostile = new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap });
    expect(outcomeOf(hostile)).toBe('error');
  });

  test('a cyclic result is read without throwing', () => {
    const result: Record<string, unknown> = { status: 'done' };
    result.self = result;
    expect(outcomeOf(result)).toBe('success');
  });

  test('content nested deeper than anything real gives no text, and no exception', () => {
    let nested: unknown = [{ type: 'text', text: 'Error: deep' }];
    for (let i = 0; i < 10_000; i += 1) nested = [nested];
    expect(resultText(nested)).toBe('');
    expect(outcomeOf({ content: nested })).toBe('success');
  });

  test('only the first MAX_SCANNED_TEXT characters are scanned: an exit code after them is not seen', () => {
    const text = `${'x'.repeat(MAX_SCANNED_TEXT)}\nExit Code: 1`;
    expect(outcomeOf(text)).toBe('success');
  });
});

describe('resultText', () => {
  test('a string is its own text', () => {
    expect(resultText('hello')).toBe('hello');
  });

  test('content arrays: text parts joined by newlines, images left out', () => {
    const content = [
      { type: 'text', text: 'a' },
      { type: 'image', source: { data: 'AAAA' } },
      { type: 'text', text: 'b' },
    ];
    expect(resultText({ content })).toBe('a\nb');
  });

  test('a Gemini functionResponse part gives its output', () => {
    expect(resultText({ functionResponse: { name: 'ls', response: { output: 'src\ntest' } } })).toBe('src\ntest');
  });

  test('an OpenAI Responses function_call_output gives its output', () => {
    expect(resultText({ type: 'function_call_output', call_id: 'c', output: 'done' })).toBe('done');
  });

  test('an AI SDK json output gives its value as JSON', () => {
    expect(resultText({ type: 'json', value: { rows: 2 } })).toBe('{"rows":2}');
  });

  test('an object with no text member is given as JSON', () => {
    expect(resultText({ rows: [1, 2] })).toBe('{"rows":[1,2]}');
  });

  test('is at most MAX_SCANNED_TEXT characters', () => {
    expect(resultText('y'.repeat(MAX_SCANNED_TEXT * 2))).toHaveLength(MAX_SCANNED_TEXT);
  });
});
