/**
 * `stately.config.json` (this project's list of its machines) and the
 * export of every listed machine's charts (`exportCharts`: JSON, DOT, SVG,
 * Mermaid), which the `pulse-safety export` command runs; `PACKAGE_ROOT`,
 * where the installed package's own config and machines are.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { z } from 'zod';
import { toDot } from './dot.js';
import { toMachineConfig } from './machine-config.js';
import { toMermaid } from './mermaid.js';
import { renderSvg } from './svg.js';

/** The schema of `stately.config.json` (this project's own file; no Stately tool reads it). */
export const statelyConfigSchema = z.object({
  /** Folder the charts are written to, relative to the config file. */
  outDir: z.string().trim().min(1),
  machines: z
    .array(
      z.object({
        /** The machine's id (also the charts' file name). */
        id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a plain file name (letters, digits, _ . -)'),
        /** The TypeScript source module, relative to the config file, e.g. `machines/safety.machine.ts`. */
        module: z.string().trim().min(1),
        /** The name the module exports the machine under. */
        export: z.string().trim().min(1),
        description: z.string().optional(),
      }),
    )
    .min(1),
});

/** The parsed `stately.config.json`. */
export type StatelyConfig = z.infer<typeof statelyConfigSchema>;

/**
 * Reads and validates a `stately.config.json`.
 *
 * @throws Error naming the file and the bad entry when it is missing, not
 *   JSON, or not of the documented shape.
 */
export async function readStatelyConfig(path: string): Promise<StatelyConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = statelyConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** True when this module runs compiled (from `dist/`), false when run from its TypeScript source. */
const compiled = import.meta.url.endsWith('.js');

/**
 * The file to import for a machine's `module` (a `.ts` source path relative
 * to `root`, the folder of `stately.config.json`). Compiled code loads the
 * compiled module, `dist/<module>.js`; from source (tests), the `.ts` itself.
 */
export function machineModuleFile(root: string, module: string, options: { compiled?: boolean } = {}): string {
  if (!(options.compiled ?? compiled)) return resolve(root, module);
  return resolve(root, 'dist', module.replace(/\.(c|m)?tsx?$/, '.js'));
}

function isStateMachine(value: unknown): value is AnyStateMachine {
  return (
    typeof value === 'object' &&
    value !== null &&
    'root' in value &&
    'getTransitionData' in value &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  );
}

/**
 * Loads a machine listed in the config.
 *
 * @throws Error naming the module and export when the module cannot be
 *   imported or does not export an XState machine under that name.
 */
export async function loadConfiguredMachine(
  root: string,
  entry: StatelyConfig['machines'][number],
  options: { compiled?: boolean } = {},
): Promise<AnyStateMachine> {
  const file = machineModuleFile(root, entry.module, options);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`machine '${entry.id}': cannot import ${file}: ${(error as Error).message}`, { cause: error });
  }
  const machine = module[entry.export];
  if (!isStateMachine(machine)) {
    throw new Error(`machine '${entry.id}': ${entry.module} exports no XState machine named '${entry.export}'`);
  }
  return machine;
}

/** The four files written for one machine. */
export interface MachineCharts {
  /** The machine config as JSON (`toMachineConfig`), pretty-printed: what `createMachine` accepts. */
  json: string;
  dot: string;
  svg: string;
  mermaid: string;
}

/** All charts of one machine. @throws Error when Graphviz cannot render the DOT. */
export async function chartsOf(machine: AnyStateMachine): Promise<MachineCharts> {
  const dot = toDot(machine);
  return {
    json: JSON.stringify(toMachineConfig(machine), null, 2) + '\n',
    dot,
    svg: await renderSvg(dot),
    mermaid: toMermaid(machine),
  };
}

/** The file extension of each chart. */
export const CHART_EXTENSIONS: Readonly<Record<keyof MachineCharts, string>> = {
  json: 'json',
  dot: 'dot',
  svg: 'svg',
  mermaid: 'mmd',
};

/**
 * Writes `<outDir>/<id>.{json,dot,svg,mmd}` for every machine of a config.
 *
 * @param configPath path of `stately.config.json`; its folder is the root
 *   that `module` and `outDir` are relative to.
 * @param options.outDir overrides the config's `outDir` (relative to the current directory).
 * @returns the paths written.
 * @throws Error on a bad config, a machine that cannot be loaded, or a write that fails.
 */
export async function exportCharts(configPath: string, options: { outDir?: string; compiled?: boolean } = {}): Promise<string[]> {
  const config = await readStatelyConfig(configPath);
  const root = dirname(resolve(configPath));
  const outDir = options.outDir !== undefined ? resolve(options.outDir) : resolve(root, config.outDir);
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const entry of config.machines) {
    const machine = await loadConfiguredMachine(root, entry, options);
    const charts = await chartsOf(machine);
    for (const [kind, extension] of Object.entries(CHART_EXTENSIONS) as [keyof MachineCharts, string][]) {
      const file = join(outDir, `${entry.id}.${extension}`);
      await writeFile(file, charts[kind]);
      written.push(file);
    }
  }
  return written;
}

/** The package root: two folders above this module's folder from source (`src/charts/`), three compiled (`dist/src/charts/`). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), compiled ? '../../..' : '../..');
