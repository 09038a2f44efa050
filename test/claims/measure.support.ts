/**
 * The phantom-claim measurement: every final answer of the tau-bench
 * airline runs and of the incident transcripts, judged as the machine
 * judges it (`phantomClaimOf`) against the writes that succeeded before it
 * in its run, each classified by the run's catalog (as `--catalog auto`).
 * Judged apart from the other answer rules, so an answer another rule
 * refuses first is still measured.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { phantomClaimOf } from '../../machines/safety.claims.js';
import { initialSafetyContext } from '../../machines/safety.actions.js';
import { readTranscript } from '../../src/audit/transcripts/index.js';
import { builtinCatalogs, createCallClassifier, pickCatalog, type BuiltinCatalogName } from '../../src/classify/catalog/index.js';
import { detectClaims } from '../../src/claims/detect.js';

/** The tau-bench file, beside the repository (docs/audit.md, "Real transcripts"). */
export const TAU_BENCH = fileURLToPath(new URL('../../../shared/data/tau-bench/gpt-4o-airline.json', import.meta.url));
const INCIDENTS = fileURLToPath(new URL('../fixtures/incidents/', import.meta.url));

/** One final answer: its id (`<file>#<run>#<position>`), text, whether it is flagged, and its claims. */
export interface MeasuredAnswer {
  id: string;
  text: string;
  flagged: boolean;
  claims: number;
}

/** The incident transcripts measured. */
export function incidentFiles(): string[] {
  return readdirSync(INCIDENTS)
    .filter((f) => !f.endsWith('.catalog.json'))
    .sort()
    .map((f) => INCIDENTS + f);
}

/** The final answers of `file`, each judged. */
export function measure(file: string): MeasuredAnswer[] {
  const name = file.split(/[\\/]/).pop()!;
  const answers: MeasuredAnswer[] = [];
  for (const run of readTranscript(readFileSync(file, 'utf8'), file)) {
    const names = run.steps.flatMap((s) => (s.type === 'call' ? [s.name] : []));
    const catalog = (run.catalog ?? pickCatalog(names).name) as BuiltinCatalogName;
    const classify = createCallClassifier(builtinCatalogs[catalog]);
    const calls = new Map<string, ReturnType<typeof classify>>();
    const context = initialSafetyContext();
    for (const step of run.steps) {
      if (step.type === 'call') calls.set(step.id, classify(step.name, step.args, step.cwd === undefined ? {} : { cwd: step.cwd }));
      if (step.type === 'result' && step.outcome === 'success' && calls.get(step.id)?.kind === 'write') {
        context.writeSeq += 1;
        context.writtenTargets = [...(context.writtenTargets ?? []), ...calls.get(step.id)!.targets];
      }
      if (step.type === 'answer') {
        const claims = detectClaims(step.text);
        const event = { type: 'answer.requested', at: 0, claims };
        answers.push({
          id: `${name}#${run.id.replace(/^.*[\\/]/, '')}#${step.position}`,
          text: step.text,
          flagged: phantomClaimOf(context, event) !== null,
          claims: claims.length,
        });
      }
    }
  }
  return answers;
}

/** Every measured answer: tau-bench's (when the file is present) and the incidents'. */
export function measureAll(): { answers: MeasuredAnswer[]; tauBench: boolean } {
  const tauBench = existsSync(TAU_BENCH);
  const files = tauBench ? [TAU_BENCH, ...incidentFiles()] : incidentFiles();
  return { answers: files.flatMap(measure), tauBench };
}
