/**
 * stately.config.json: this project's own config listing its machines
 * (`module`, `export`, `id`) and the folder exported charts go to. No Stately
 * tool reads this file (Stately's CLI reads `statelyai.json`); this test loads
 * every machine it lists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { StateMachine } from 'xstate';
import { z } from 'zod';

const CONFIG_URL = new URL('../../stately.config.json', import.meta.url);
const ROOT_URL = new URL('../../', import.meta.url);

/** The documented shape of the config. */
const configSchema = z.strictObject({
  $comment: z.string().optional(),
  /** Folder, relative to the config, the export command writes charts to. */
  outDir: z.string().trim().min(1),
  machines: z
    .array(
      z.strictObject({
        /** The machine's id (`machine.id`). */
        id: z.string().trim().min(1),
        /** Source file, relative to the config. */
        module: z.string().regex(/^(?!\/)(?!.*\.\.).+\.ts$/, 'must be a relative .ts path inside the project'),
        /** Name of the exported machine. */
        export: z.string().regex(/^[A-Za-z_$][\w$]*$/, 'must be an identifier'),
        description: z.string().optional(),
      }),
    )
    .min(1),
});

const raw: unknown = JSON.parse(readFileSync(CONFIG_URL, 'utf8'));
const parsed = configSchema.safeParse(raw);
const machines = parsed.success ? parsed.data.machines : [];

describe('stately.config.json', () => {
  it('has a valid shape', () => {
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  });

  it('lists each machine id once', () => {
    const ids = machines.map((machine) => machine.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists the safety machine', () => {
    expect(machines.map((machine) => machine.id)).toContain('safety');
  });

  it('puts charts in a folder inside the project', () => {
    const outDir = parsed.success ? parsed.data.outDir : '';
    expect(fileURLToPath(new URL(`${outDir}/`, ROOT_URL)).startsWith(fileURLToPath(ROOT_URL))).toBe(true);
  });

  describe.each(machines)('machine $id', (entry) => {
    it(`module ${entry.module} exists`, () => {
      expect(existsSync(new URL(entry.module, ROOT_URL))).toBe(true);
    });

    it(`exports ${entry.export} as an XState machine`, async () => {
      const module = (await import(new URL(entry.module, ROOT_URL).href)) as Record<string, unknown>;
      expect(module[entry.export]).toBeInstanceOf(StateMachine);
    });

    it(`has the id ${entry.id}`, async () => {
      const module = (await import(new URL(entry.module, ROOT_URL).href)) as Record<string, unknown>;
      expect((module[entry.export] as { id?: unknown }).id).toBe(entry.id);
    });
  });
});
