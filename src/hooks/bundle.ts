/**
 * The hook bundle and its code cache. `npm run build` bundles the hook
 * process (`process.ts` and everything it imports but the parsers' own
 * packages, loaded on demand) into one CommonJS file, `dist/hook/hook.cjs`
 * (`scripts/bundle-hook.mjs`): one file read instead of hundreds of modules
 * resolved. This module runs that file with V8's code cache: the first run
 * compiles it and saves the compiled code (`vm.Script#createCachedData`) in
 * the user's cache directory, keyed by the bundle's content and the Node
 * version; later runs start from it instead of compiling (Node 20 has no
 * compile cache of its own: `module.enableCompileCache` is Node 22.1+).
 *
 * The cache is an optimisation only: a cache that is missing, unreadable or
 * rejected by V8 means compiling as without one; a cache that cannot be
 * written is not written. It is kept under the user's cache directory
 * (`codeCacheDirectory`), never a shared one, with owner-only modes.
 *
 * Spec: issue 25 item 7 (cache compiled code).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';

/** What the hook bundle exports (`process.ts`). */
interface HookBundleExports {
  runHookProcess(host: string): Promise<void>;
}

/**
 * The directory the code cache is kept in, or null when it is off:
 * `PULSE_SAFETY_CODE_CACHE=0` turns it off; else `PULSE_SAFETY_CACHE_DIR`,
 * `$XDG_CACHE_HOME/pulse-safety-fsm`, or `~/.cache/pulse-safety-fsm`
 * (relative paths are ignored, as XDG says).
 */
function codeCacheDirectory(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.PULSE_SAFETY_CODE_CACHE === '0') return null;
  const own = env.PULSE_SAFETY_CACHE_DIR;
  if (own !== undefined && own !== '') return isAbsolute(own) ? own : null;
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'pulse-safety-fsm');
  return join(homedir(), '.cache', 'pulse-safety-fsm');
}

/** The cache file of a bundle's source: its SHA-256, the Node version and the architecture in the name (V8 checks only the source's length). */
function cacheFileOf(directory: string, source: string): string {
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 32);
  return join(directory, `hook-${digest}-${process.version}-${process.arch}.v8cache`);
}

/** The cached code in `file`, or undefined when there is none (or it cannot be read). */
function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Writes `data` to `file` atomically (a temporary file renamed), owner-only,
 * and removes the caches of other bundles or Node versions beside it; gives
 * up silently.
 */
function writeCache(file: string, data: Buffer): void {
  const directory = dirname(file);
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
    for (const name of readdirSync(directory)) {
      if (name.startsWith('hook-') && name.endsWith('.v8cache') && name !== basename(file)) rmSync(join(directory, name), { force: true });
    }
  } catch {
    rmSync(temporary, { force: true });
  }
}

/** What `runHookBundle` did with the code cache: used it, wrote it (none yet, or V8 rejected it), or none (off). */
export type CodeCacheUse = 'used' | 'written' | 'off';

/**
 * Runs one hook event with the hook bundle at `bundleFile`: loads it (from
 * the code cache when there is a usable one), runs its `runHookProcess(host)`,
 * then writes the code cache when there was none to use.
 *
 * @returns how the code cache was used.
 * @throws Error when the bundle cannot be read or compiled, before any of
 *   the hook ran (the caller then runs the hook from its modules).
 */
export async function runHookBundle(bundleFile: string, host: string, env: NodeJS.ProcessEnv = process.env): Promise<CodeCacheUse> {
  // The V8 flags the hook runs with (`process.ts`), set before compiling: V8 accepts cached code only under the flags it was made with.
  setFlagsFromString('--liftoff-only');
  const source = readFileSync(bundleFile, 'utf8');
  const directory = codeCacheDirectory(env);
  const cacheFile = directory === null ? null : cacheFileOf(directory, source);
  const cachedData = cacheFile === null ? undefined : readCache(cacheFile);
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, {
    filename: bundleFile,
    ...(cachedData === undefined ? {} : { cachedData }),
    // The bundle requires its externals (no `import()` is left in CommonJS), but a dynamic import must not fail.
    ...(vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined
      ? {}
      : { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }),
  });
  const module = { exports: {} as HookBundleExports };
  const define = script.runInThisContext() as (...args: unknown[]) => void;
  define.call(module.exports, module.exports, createRequire(bundleFile), module, bundleFile, dirname(bundleFile));
  await module.exports.runHookProcess(host);
  if (cacheFile === null) return 'off';
  if (cachedData !== undefined && !script.cachedDataRejected) return 'used';
  writeCache(cacheFile, script.createCachedData());
  return 'written';
}
