/**
 * Bundles the coding-agent hook (`src/hooks/process.ts` and everything it
 * imports) into one CommonJS file, `dist/hook/hook.cjs`, which
 * `pulse-safety hook <host>` runs with V8's code cache (`src/hooks/bundle.ts`):
 * a hook is a fresh process per tool call, and one file compiled once starts
 * faster than hundreds of modules resolved and compiled (issue 25 item 7).
 *
 * The parsers' packages stay outside the bundle (web-tree-sitter,
 * libpg-query, node-sql-parser): the hook loads them only for a call that
 * needs them, from node_modules, where their WebAssembly files are.
 * A build output only: dist/ is not committed.
 *
 * Usage: node scripts/bundle-hook.mjs [outfile] (after tsc; `npm run build`
 * runs it); the tests import `bundleHook`.
 */
import { build } from 'esbuild';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Writes the hook bundle to `outfile` (default `dist/hook/hook.cjs` of the project).
 * @param {string} [outfile] where to write it.
 * @returns {Promise<void>}
 * @throws when esbuild fails (a message per error).
 */
export async function bundleHook(outfile = resolve(root, 'dist/hook/hook.cjs')) {
  await build({
    absWorkingDir: root,
    entryPoints: ['src/hooks/process.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    legalComments: 'none',
    external: ['web-tree-sitter', 'libpg-query', 'node-sql-parser', 'tree-sitter-bash'],
    // CommonJS has no import.meta: the bundle's own URL, for createRequire (the parsers' WebAssembly files).
    define: { 'import.meta.url': '__bundle_url' },
    banner: { js: "const __bundle_url = require('node:url').pathToFileURL(__filename).href;" },
    // The parsers' packages are loaded with require (their CommonJS builds), not import(): the bundle runs in a vm.Script.
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bundleHook(process.argv[2]);
