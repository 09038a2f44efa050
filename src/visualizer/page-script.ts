/**
 * The page's JavaScript modules, served from this package: compiled next to
 * this module by `npm run build`, or transpiled from their TypeScript source
 * when the package runs from source.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This module's folder: `src/visualizer` (from source) or `dist/src/visualizer` (compiled). */
const HERE = fileURLToPath(new URL('.', import.meta.url));

/**
 * The page's JavaScript module `name` (e.g. `main.js`): the compiled file
 * next to this module (`npm run build`), or, running from source, the
 * TypeScript source transpiled by the TypeScript compiler; null when there
 * is neither.
 */
export async function pageScript(name: string): Promise<string | null> {
  const compiled = join(HERE, 'page', name);
  if (existsSync(compiled)) return readFile(compiled, 'utf8');
  const source = join(HERE, 'page', name.replace(/\.js$/, '.ts'));
  if (!name.endsWith('.js') || !existsSync(source)) return null;
  const ts = (await import('typescript')).default;
  return ts.transpileModule(await readFile(source, 'utf8'), {
    fileName: source,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, sourceMap: false },
  }).outputText;
}
