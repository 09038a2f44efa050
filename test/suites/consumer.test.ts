/**
 * The package from an XState app's side: the package is built and packed
 * (`npm pack`, from a staging copy so the repo's own `dist/` is left alone),
 * the tarball installed (no symlink) into an empty TypeScript project
 * together with an xstate version given explicitly, and there a small app
 * that uses the machine as XState users do is type-checked (strict) with
 * this repo's TypeScript and run with Node: `setup({ actors: { safety:
 * safetyMachine } })`, an `invoke` without `input`, `createActor(safetyMachine)`
 * without input, one event sent; and a parent statechart that invokes the
 * gate and hears its decisions as typed events (`on: { 'gate.decided' }`,
 * the pattern of examples/parent-machine.ts). The package's declarations that name
 * xstate's types (the machine, the session guard, the testing entry) are
 * type-checked against that xstate with library checking on: the app itself
 * skips library checks, as most apps do.
 *
 * It runs against the lowest xstate of the package's peer range (the floor
 * of `peerDependencies.xstate`) and the newest 5.x: xstate is a peer
 * dependency, so the app's own copy is the only one.
 *
 * Network: `npm install` from the registry only (`--prefer-offline`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

interface PackageJson {
  files: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** The package's xstate peer range, e.g. `^5.33.0`; undefined while xstate is not a peer dependency. */
const PEER_RANGE = pkg.peerDependencies?.['xstate'];

/**
 * The lowest xstate version a range admits: its first `x.y.z` (the floor of
 * `^x.y.z`, `~x.y.z` and `>=x.y.z`). Without a peer range, the version the
 * package is developed against (the peer dependency test then fails).
 */
function floorOf(range: string | undefined): string {
  const floor = range === undefined ? undefined : /\d+\.\d+\.\d+/.exec(range)?.[0];
  return floor ?? (pkg.devDependencies?.['xstate'] ?? pkg.dependencies?.['xstate'] ?? '5').replace(/^[\^~]/, '');
}

/** The versions tested: the floor of the peer range, and `5` (npm picks the newest 5.x). */
const VERSIONS: { name: string; spec: string }[] = [
  { name: `the lowest supported xstate (${floorOf(PEER_RANGE)})`, spec: floorOf(PEER_RANGE) },
  { name: 'the newest xstate 5.x', spec: '5' },
];

const npmEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: npmEnv });
}

/** The app: what an XState user writes first with the gate. */
const APP_SOURCE = `import { createActor, setup } from 'xstate';
import { safetyMachine } from 'pulse-safety-fsm';

// The gate as a child actor, invoked without input.
const parent = setup({ actors: { safety: safetyMachine } }).createMachine({
  id: 'agent',
  invoke: { id: 'gate', src: 'safety' },
});

// The gate on its own, created without input.
const gate = createActor(safetyMachine);
const decisions: { allowed: boolean; state: string; rule: string | null }[] = [];
gate.on('gate.decided', (decision) => decisions.push({ allowed: decision.allowed, state: decision.state, rule: decision.rule }));
gate.start();
gate.send({ type: 'tool.requested', callId: 'c1', tool: 'deploy', kind: 'write', at: 0 });

const agent = createActor(parent).start();
const child = agent.getSnapshot().children.gate;
console.log(JSON.stringify({ gate: gate.getSnapshot().value, decisions, child: child?.getSnapshot().value ?? null }));
`;

/**
 * The parent example's pattern (examples/parent-machine.ts): a statechart
 * that invokes the gate, sends it requests, and hears its decisions as its
 * own typed events (`on: { 'gate.decided': ... }`), with no casts.
 */
const PARENT_SOURCE = `import { assign, createActor, sendTo, setup } from 'xstate';
import { safetyMachine, type SafetyEmitted } from 'pulse-safety-fsm';

type Ask = { type: 'ask'; tool: string; kind: 'read' | 'write' };

const loop = setup({
  types: { context: {} as { heard: string[] }, events: {} as SafetyEmitted | Ask },
  actors: { safety: safetyMachine },
}).createMachine({
  context: { heard: [] },
  invoke: { id: 'gate', src: 'safety' },
  on: {
    ask: { actions: sendTo('gate', ({ event }) => ({ type: 'tool.requested' as const, tool: event.tool, kind: event.kind, at: 0 })) },
    'gate.decided': {
      actions: assign({ heard: ({ context, event }) => [...context.heard, \`\${event.tool} \${event.allowed} \${event.state}\`] }),
    },
  },
});

const actor = createActor(loop).start();
actor.send({ type: 'ask', tool: 'deploy', kind: 'write' });
actor.send({ type: 'ask', tool: 'status', kind: 'read' });
console.log(JSON.stringify(actor.getSnapshot().context.heard));
`;

const APP_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: true,
    types: [],
    outDir: 'out',
  },
  include: ['src'],
};

/**
 * The package's declarations that name xstate's types (the machine, the session guard, the testing entry),
 * and the main entry's whole surface, which must not name an optional dependency's types (TS7016 without
 * `skipLibCheck`: `better-sqlite3` ships none).
 */
const XSTATE_DECLARATIONS = [
  'dist/src/index.d.ts',
  'dist/machines/safety.machine.d.ts',
  'dist/src/guard/session-guard.d.ts',
  'dist/src/testing/index.d.ts',
];

/** Checks those declarations, and what they import, against the installed xstate. */
const DECLARATIONS_TSCONFIG = {
  compilerOptions: { ...APP_TSCONFIG.compilerOptions, skipLibCheck: false, noEmit: true, outDir: undefined },
  files: XSTATE_DECLARATIONS.map((file) => `node_modules/pulse-safety-fsm/${file}`),
};

const work = mkdtempSync(join(tmpdir(), 'pulse-safety-consumer-'));
let tarball = '';

beforeAll(() => {
  // Build into a staging copy of the package's files, then pack that copy.
  const build = join(work, 'build');
  execFileSync(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', build], { cwd: ROOT, stdio: 'pipe' });
  const staging = join(work, 'staging');
  mkdirSync(staging);
  cpSync(join(ROOT, 'package.json'), join(staging, 'package.json'));
  for (const entry of pkg.files) {
    const from = entry.startsWith('dist/') ? join(build, entry.slice('dist/'.length)) : join(ROOT, entry);
    if (existsSync(from)) cpSync(from, join(staging, entry), { recursive: true });
  }
  const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], staging)) as { filename: string }[];
  tarball = join(work, packed!.filename);
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('xstate as a peer dependency', () => {
  it('is a peer dependency with a 5.x range, not a dependency', () => {
    expect(pkg.dependencies?.['xstate']).toBeUndefined();
    expect(PEER_RANGE).toMatch(/^(\^|>=)5\.\d+\.\d+$/);
  });

  it('is still a dev dependency the package is built and tested with', () => {
    expect(pkg.devDependencies?.['xstate']).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe.each(VERSIONS)('an app on $name', ({ spec }) => {
  const app = join(work, `app-${spec}`);
  let typecheck: { status: number | null; output: string };
  let declarations: { status: number | null; output: string };
  let installed = '';

  beforeAll(() => {
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(APP_TSCONFIG, null, 2));
    writeFileSync(join(app, 'src', 'app.ts'), APP_SOURCE);
    writeFileSync(join(app, 'src', 'parent.ts'), PARENT_SOURCE);
    // No symlink: the tarball is unpacked into node_modules. --ignore-scripts: nothing of the package needs one.
    npm(['install', tarball, `xstate@${spec}`, '--omit=optional', '--ignore-scripts', '--prefer-offline', '--no-package-lock'], app);
    installed = (JSON.parse(readFileSync(join(app, 'node_modules', 'xstate', 'package.json'), 'utf8')) as { version: string }).version;
    const tsc = (config: string) => {
      const run = spawnSync(process.execPath, [TSC, '-p', join(app, config)], { cwd: app, encoding: 'utf8' });
      return { status: run.status, output: `${run.stdout}${run.stderr}` };
    };
    writeFileSync(join(app, 'tsconfig.declarations.json'), JSON.stringify(DECLARATIONS_TSCONFIG, null, 2));
    declarations = tsc('tsconfig.declarations.json');
    typecheck = tsc('tsconfig.json');
  }, 300_000);

  it('has one copy of xstate, the one the app installed', () => {
    if (spec !== '5') expect(installed).toBe(spec);
    else expect(installed).toMatch(/^5\./);
    expect(existsSync(join(app, 'node_modules', 'pulse-safety-fsm', 'node_modules', 'xstate'))).toBe(false);
  });

  it("has declarations that type-check against the app's xstate", () => {
    expect(declarations.output).toBe('');
    expect(declarations.status).toBe(0);
  });

  it('type-checks setup({ actors: { safety } }), an invoke without input and createActor without input', () => {
    expect(typecheck.output).toBe('');
    expect(typecheck.status).toBe(0);
  });

  it("type-checks the parent example's pattern: a parent with on: { 'gate.decided': ... }, no casts", () => {
    // The app's whole project (src/app.ts and src/parent.ts) compiles without a diagnostic.
    expect(typecheck.output).toBe('');
    expect(existsSync(join(app, 'out', 'parent.js'))).toBe(true);
  });

  it("runs the parent example's pattern: the invoked gate's decisions reach the parent as events", () => {
    const out = execFileSync(process.execPath, [join(app, 'out', 'parent.js')], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(['deploy false RESOLVING', 'status true RESOLVING']);
  });

  it('runs: the gate refuses a write in RESOLVING, and the invoked gate starts in RESOLVING', () => {
    const out = execFileSync(process.execPath, [join(app, 'out', 'app.js')], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({
      gate: 'RESOLVING',
      decisions: [{ allowed: false, state: 'RESOLVING', rule: 'no-target' }],
      child: 'RESOLVING',
    });
  });
});
