/**
 * The opencode plugin in the real opencode (npm `opencode-ai` 1.18.33, its
 * binary from node_modules): `opencode run` against a scripted
 * OpenAI-compatible model server of this test's own on 127.0.0.1 (a custom
 * provider in the project's `opencode.json`), with the plugin loaded from a
 * file. Offline: HOME and the XDG directories are temporary, the npm
 * registry opencode would install `@opencode-ai/plugin` from is a closed
 * loopback port, and the global config directory already holds that package.
 *
 * The script: a write of a.txt before any read (refused: the model's next
 * request carries the refusal, and the file is unchanged), a read of a.txt,
 * the write again (admitted: the file changes), an answer.
 *
 * Takes 2.5 to 4 minutes on this loaded 2-core machine (opencode's own
 * start-up dominates). Under CI=true a missing binary fails the test.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * opencode's native binary: `PULSE_SAFETY_OPENCODE_BIN` (CI installs npm `opencode-ai` 1.18.33 into a prefix of its
 * own and points this at its platform package's binary: the registry lacks some of its platform packages, so it
 * cannot be a locked dev dependency, which `npm ci` refuses), else `node_modules/.bin/opencode`.
 */
const BINARY = process.env.PULSE_SAFETY_OPENCODE_BIN || fileURLToPath(new URL('../../node_modules/.bin/opencode', import.meta.url));
const PLUGIN_SOURCE = fileURLToPath(new URL('../../src/adapters/opencode.ts', import.meta.url));
const PLUGIN_PACKAGE = fileURLToPath(new URL('../../node_modules/@opencode-ai/plugin', import.meta.url));
const present = existsSync(BINARY);
if (!present && process.env.CI === 'true')
  throw new Error(
    `CI=true and the opencode binary is missing at ${BINARY} (.ci/run installs opencode-ai and sets PULSE_SAFETY_OPENCODE_BIN)`,
  );

type Step = { tool: string; args: Record<string, unknown> } | { text: string };

/** One request of opencode's main loop (one with tools) as the server saw it: its body, and a.txt's content when it came. */
interface Seen {
  body: string;
  file: string;
}

/** A scripted OpenAI-compatible chat-completions server (streamed), on 127.0.0.1. Requests without tools (the title) get a title. */
function scriptedServer(script: Step[], file: string): { server: Server; seen: Seen[] } {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (!req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end('{}');
        return;
      }
      const parsed = JSON.parse(body) as { tools?: unknown[] };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: unknown, finish: string | null): void => {
        const data = {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'm1',
          choices: [{ index: 0, delta, finish_reason: finish }],
        };
        res.write(
          `data: ${JSON.stringify(finish === null ? data : { ...data, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n`,
        );
      };
      const main = Array.isArray(parsed.tools) && parsed.tools.length > 0;
      const step: Step = main ? (script[seen.length] ?? { text: 'nothing more' }) : { text: 'A title' };
      if (main) seen.push({ body, file: readFileSync(file, 'utf8') });
      if ('tool' in step) {
        const call = {
          index: 0,
          id: `call_${seen.length}`,
          type: 'function',
          function: { name: step.tool, arguments: JSON.stringify(step.args) },
        };
        chunk({ role: 'assistant', tool_calls: [call] }, null);
        chunk({}, 'tool_calls');
      } else {
        chunk({ role: 'assistant', content: step.text }, null);
        chunk({}, 'stop');
      }
      res.end('data: [DONE]\n\n');
    });
  });
  return { server, seen };
}

/** Runs `opencode run --format json <prompt>` in `project`; resolves with its JSON lines, whatever its exit. */
function runOpencode(
  project: string,
  home: string,
  prompt: string,
): Promise<{ code: number | null; events: { type: string; part?: Record<string, unknown> }[]; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_STATE_HOME: join(home, '.local/state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    npm_config_registry: 'http://127.0.0.1:9/',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(BINARY, ['run', '--format', 'json', prompt], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      const events = stdout
        .split('\n')
        .filter((line) => line.trim().startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; part?: Record<string, unknown> });
      resolve({ code, events, stderr });
    });
  });
}

describe.skipIf(!present)('opencode plugin in the real opencode 1.18.33', () => {
  const root = mkdtempSync(join(tmpdir(), 'pulse-opencode-'));
  const project = join(root, 'project');
  const home = join(root, 'home');
  const file = join(project, 'a.txt');
  const script: Step[] = [
    { tool: 'write', args: { filePath: file, content: 'changed\n' } },
    { tool: 'read', args: { filePath: file } },
    { tool: 'write', args: { filePath: file, content: 'changed\n' } },
    { text: 'a.txt now says changed.' },
  ];
  const { server, seen } = scriptedServer(script, file);
  let result: Awaited<ReturnType<typeof runOpencode>>;

  beforeAll(async () => {
    mkdirSync(project, { recursive: true });
    writeFileSync(file, 'hello\n');
    // The global config directory already holds @opencode-ai/plugin, so opencode need not install it.
    const config = join(home, '.config', 'opencode');
    mkdirSync(join(config, 'node_modules', '@opencode-ai'), { recursive: true });
    writeFileSync(join(config, 'package.json'), JSON.stringify({ dependencies: { '@opencode-ai/plugin': '1.18.33' } }));
    symlinkSync(PLUGIN_PACKAGE, join(config, 'node_modules', '@opencode-ai', 'plugin'));
    const plugin = join(root, 'safety-plugin.ts');
    writeFileSync(plugin, `export { default } from ${JSON.stringify(PLUGIN_SOURCE)};\n`);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    writeFileSync(
      join(project, 'opencode.json'),
      JSON.stringify({
        $schema: 'https://opencode.ai/config.json',
        provider: {
          scripted: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Scripted',
            options: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'dummy' },
            models: { m1: { name: 'm1', tool_call: true } },
          },
        },
        model: 'scripted/m1',
        small_model: 'scripted/m1',
        autoupdate: false,
        share: 'disabled',
        permission: { edit: 'allow', bash: 'allow', external_directory: 'allow' },
        plugin: [`file://${plugin}`],
      }),
    );
    result = await runOpencode(project, home, 'Change a.txt to say changed.');
  }, 480_000);

  afterAll(() => {
    server.close();
    rmSync(root, { recursive: true, force: true });
  });

  const tools = (): { tool: string; status: string; error?: string }[] =>
    result.events
      .filter((event) => event.type === 'tool_use')
      .map((event) => {
        const part = event.part as { tool: string; state: { status: string; error?: string } };
        return { tool: part.tool, status: part.state.status, ...(part.state.error === undefined ? {} : { error: part.state.error }) };
      });

  it('runs the whole script and exits 0', () => {
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    expect(seen).toHaveLength(4);
  });

  it('refuses the write before any read: the tool part ends in error with FSM_BLOCKED, and the file is unchanged', () => {
    const [first] = tools();
    expect(first).toMatchObject({ tool: 'write', status: 'error' });
    expect(first!.error).toContain('FSM_BLOCKED');
    expect(first!.error).toContain('rule no-target');
    expect(seen[1]!.file).toBe('hello\n');
  });

  it('the model sees the refusal in its next request', () => {
    expect(seen[1]!.body).toContain('FSM_BLOCKED');
    expect(seen[0]!.body).not.toContain('FSM_BLOCKED');
  });

  it('admits the write after the read of a.txt', () => {
    expect(tools().map((t) => `${t.tool}:${t.status}`)).toEqual(['write:error', 'read:completed', 'write:completed']);
    expect(seen[3]!.file).toBe('changed\n');
  });
});
