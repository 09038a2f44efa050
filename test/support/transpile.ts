/**
 * Transpiles a TypeScript module and the project modules it imports
 * (relative specifiers, followed recursively; JSON copied) with
 * `ts.transpileModule`, so a child process can run it with plain `node`.
 * Type-only imports are followed too (harmless: one more file). Faster than
 * a whole `tsc` build, and no type check: `npm run typecheck` does that.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * Writes `entry` (a `.ts` file under `root`) and its relative imports into
 * `out`, at the same paths relative to `root`, as `.js`.
 * @returns the path of the transpiled entry.
 */
export function transpileTree(root: string, entry: string, out: string, done = new Set<string>()): string {
  const target = join(out, relative(root, entry));
  if (done.has(entry)) return target.replace(/\.ts$/, '.js');
  done.add(entry);
  mkdirSync(dirname(target), { recursive: true });
  if (entry.endsWith('.json')) {
    copyFileSync(entry, target);
    return target;
  }
  const source = readFileSync(entry, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: entry,
  });
  writeFileSync(target.replace(/\.ts$/, '.js'), outputText);
  for (const [, specifier] of source.matchAll(/(?:from|import)\s+'(\.{1,2}\/[^']+)'/g)) {
    const resolved = join(dirname(entry), specifier!);
    transpileTree(root, resolved.endsWith('.json') ? resolved : resolved.replace(/\.js$/, '.ts'), out, done);
  }
  return target.replace(/\.ts$/, '.js');
}
