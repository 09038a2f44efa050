/**
 * The install path the README gives, followed as a user would: `npm pack` in
 * a clean copy of the sources (no `dist/`: `prepack` builds it), the tarball
 * installed with XState into a project `npm init -y` made, without
 * `--ignore-scripts` or `--omit`. Then the README's first snippet, copied
 * from README.md as it stands, type-checks under a strict `tsc` without
 * `skipLibCheck` and runs; the CommonJS example of docs/install.md runs; and
 * nothing native was built. Slow (a build, a pack and an install, about a
 * minute and a half): registry access or npm's cache is needed for the
 * install.
 *
 * Spec: issue 27 items 2 and 3 (an install path, a first loop that works).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  files: string[];
  devDependencies: Record<string, string>;
};
const work = mkdtempSync(join(tmpdir(), 'pulse-safety-install-'));
const clone = join(work, 'clone');
const app = join(work, 'my-app');
const quiet = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
let packedFiles: string[] = [];
let tarball = '';

/** Runs a command; on failure, throws with everything it printed. */
function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: quiet });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: error });
  }
}

/** The first fenced block of `language` in `markdown` after the line `heading`: the text as a reader copies it. */
function fencedAfter(markdown: string, heading: string, language: string): string {
  const section = markdown.split(`\n${heading}\n`)[1];
  const block = section?.split(`\n\`\`\`${language}\n`)[1]?.split('\n```\n')[0];
  if (block === undefined) throw new Error(`no \`\`\`${language} block after '${heading}'`);
  return block;
}

/** Every directory named `name` under `dir`, recursively (symbolic links not followed). */
function directoriesNamed(dir: string, name: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.name === name) found.push(path);
    found.push(...directoriesNamed(path, name));
  }
  return found;
}

/** The README's loop is given what it leaves to the reader: the model's response and the tools, scripted. */
const PRELUDE = `
interface ModelCall { id: string; name: string; args: Record<string, unknown> }
const modelResponse: { toolCalls: ModelCall[]; text: string } = {
  text: '',
  toolCalls: [
    { id: 'c1', name: 'cancel_order', args: { order_id: 'A42' } },
    { id: 'c2', name: 'get_order', args: { order_id: 'A42' } },
    { id: 'c3', name: 'cancel_order', args: { order_id: 'A42' } },
    { id: 'c4', name: 'cancel_order', args: { order_id: 'B7' } },
  ],
};
const sent: { id: string; result: object }[] = [];
const ran: string[] = [];
const toModel: string[] = [];
function sendToolResult(id: string, result: object): void {
  sent.push({ id, result });
}
async function runTool(call: ModelCall): Promise<{ ok: boolean }> {
  ran.push(call.id);
  return { ok: true };
}
function sendToModel(message: string): void {
  toModel.push(message);
}
`;
const POSTLUDE = `
console.log(JSON.stringify({ sent, ran, toModel, state: guard.state }));
`;

beforeAll(() => {
  // A clean tree: the sources the package ships and builds from, no dist/, the dependencies linked.
  mkdirSync(clone);
  const sources = [
    ...pkg.files.filter((entry) => !entry.startsWith('dist')),
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts',
  ];
  for (const entry of sources) cpSync(join(root, entry), join(clone, entry), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir');
  expect(existsSync(join(clone, 'dist'))).toBe(false);
  mkdirSync(app);
  // As the README says: pack in the clone (prepack builds dist/), into the project.
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', app], clone)) as {
    filename: string;
    files: { path: string }[];
  }[];
  packedFiles = packed!.files.map((file) => file.path);
  tarball = packed!.filename;
  run('npm', ['init', '-y'], app);
  run('npm', ['pkg', 'set', 'type=module'], app);
  run(
    'npm',
    ['install', `./${tarball}`, `xstate@${pkg.devDependencies.xstate}`, `typescript@${pkg.devDependencies.typescript}`, '--prefer-offline'],
    app,
  );
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('installed from a clone as the README says', () => {
  test('the tarball, packed from a tree without dist/, holds the built package', () => {
    // The README's commands are the ones this test runs: pack into the project, install the tarball and XState.
    const commands = fencedAfter(readFileSync(join(root, 'README.md'), 'utf8'), '## Install', 'sh');
    expect(commands).toContain('npm pack --pack-destination ../my-app');
    expect(commands).toContain(`npm i ./${tarball} xstate`);
    for (const file of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/bin.js', 'dist/src/testing/index.d.ts']) {
      expect(packedFiles).toContain(file);
    }
  });

  test('built nothing native: no better-sqlite3, no node-gyp build', () => {
    const modules = join(app, 'node_modules');
    expect(existsSync(join(modules, 'better-sqlite3'))).toBe(false);
    expect(directoriesNamed(modules, 'build').filter((dir) => existsSync(join(dir, 'Release')))).toEqual([]);
    expect(readdirSync(modules)).toContain('pulse-safety-fsm');
  });

  test("the README's first snippet type-checks under a strict tsc without skipLibCheck, and gates the calls", () => {
    const snippet = fencedAfter(readFileSync(join(root, 'README.md'), 'utf8'), '## Gate an agent loop', 'ts');
    expect(snippet).toContain('createSessionGuard({ classify })'); // it declares its tools
    writeFileSync(join(app, 'first-loop.ts'), `${PRELUDE}\n${snippet}\n${POSTLUDE}`);
    // The testing entry's declarations too (docs/install.md: both compile with no other package's types).
    writeFileSync(
      join(app, 'entries.ts'),
      "import { getShortestSafetyPaths } from 'pulse-safety-fsm/testing';\nexport const paths: number = getShortestSafetyPaths().length;\n",
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, skipLibCheck: false, module: 'nodenext', target: 'es2022', outDir: 'out' },
        files: ['first-loop.ts', 'entries.ts'],
      }),
    );
    run(process.execPath, [join(app, 'node_modules/typescript/bin/tsc'), '-p', '.'], app);
    const out = execFileSync(process.execPath, ['out/first-loop.js'], { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const { sent, ran, toModel, state } = JSON.parse(out) as {
      sent: { id: string; result: { ok: boolean; error?: { code: string; rule: string; state: string } } }[];
      ran: string[];
      toModel: string[];
      state: string;
    };
    // The write before anything was read is refused; the read runs; the write of what was read runs;
    // a second write before the first is verified is refused.
    expect(ran).toEqual(['c2', 'c3']);
    expect(sent.map(({ id, result }) => [id, result.ok, result.error?.code ?? null, result.error?.state ?? null])).toEqual([
      ['c1', false, 'FSM_BLOCKED', 'RESOLVING'],
      ['c2', true, null, null],
      ['c3', true, null, null],
      ['c4', false, 'FSM_BLOCKED', 'VERIFYING'],
    ]);
    expect(sent[0]!.result.error!.rule).toBe('no-target');
    expect(toModel).toEqual([]);
    expect(state).toBe('VERIFYING');
  });

  test('a CommonJS project loads it with a dynamic import, as docs/install.md shows; require is refused', () => {
    const example = fencedAfter(readFileSync(join(root, 'docs/install.md'), 'utf8'), '## ESM only', 'js');
    writeFileSync(join(app, 'index.cjs'), example);
    expect(run(process.execPath, ['index.cjs'], app).trim()).toBe('RESOLVING');
    expect(() => run(process.execPath, ['-e', "require('pulse-safety-fsm')"], app)).toThrow(/pulse-safety-fsm is ESM only: import it/);
  });

  test('the command line runs from the project', () => {
    expect(run(join(app, 'node_modules/.bin/pulse-safety'), ['audit', '--demo'], app)).toContain('runs with a refusal');
  });
});
