/**
 * The phantom-claim detector's measured precision and recall: recomputed
 * from the detector and the labels (test/fixtures/phantom-labels.json, each
 * flagged answer and each answer read as a claim without a change), and
 * checked against what docs/claims.md and the README state, and against the
 * guard's default (on only at a precision of at least 0.9).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/guard/session-guard.js';
import { measureAll, TAU_BENCH, type MeasuredAnswer } from './measure.support.js';

interface Label {
  id: string;
  phantom: boolean;
  why: string;
}
const labels = (JSON.parse(readFileSync(new URL('../fixtures/phantom-labels.json', import.meta.url), 'utf8')) as { answers: Label[] })
  .answers;
const docs = readFileSync(new URL('../../docs/claims.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

const { answers, tauBench } = measureAll();
if (!tauBench && process.env.CI === 'true') throw new Error(`the tau-bench transcripts are missing: ${TAU_BENCH}`);
if (!tauBench) console.warn(`measuring the incidents only: ${TAU_BENCH} is absent (see docs/audit.md, "Real transcripts")`);

/** One row of the measurement: its answers, those with a claim, flagged, flagged and phantom, phantom, precision, recall. */
function row(of: MeasuredAnswer[]) {
  const label = new Map(labels.map((l) => [l.id, l]));
  const ids = new Set(of.map((a) => a.id));
  const flagged = of.filter((a) => a.flagged);
  const truePositives = flagged.filter((a) => label.get(a.id)?.phantom === true).length;
  const phantoms = labels.filter((l) => l.phantom && ids.has(l.id)).length;
  const ratio = (a: number, b: number) => (b === 0 ? '–' : (a / b).toFixed(2));
  return [
    of.length.toLocaleString('en-US'),
    String(of.filter((a) => a.claims > 0).length),
    String(flagged.length),
    String(truePositives),
    String(phantoms),
    ratio(truePositives, flagged.length),
    ratio(truePositives, phantoms),
  ];
}

/** The cells of the docs' table row whose first cell starts with `name`. */
function tableRow(name: string): string[] {
  const line = docs.split('\n').find((l) => l.startsWith(`| ${name}`));
  expect(line, `docs/claims.md has a row for ${name}`).toBeDefined();
  return line!
    .split('|')
    .slice(2, -1)
    .map((cell) => cell.trim());
}

describe('the phantom-claim measurement', () => {
  it('every answer it flags is labelled, and every label names an answer of the transcripts', () => {
    const ids = new Set(answers.map((a) => a.id));
    const labelled = new Set(labels.map((l) => l.id));
    expect(answers.filter((a) => a.flagged && !labelled.has(a.id)).map((a) => a.id)).toEqual([]);
    const known = labels.filter((l) => ids.has(l.id) || (!tauBench && l.id.startsWith('gpt-4o-airline.json#')));
    expect(known.map((l) => l.id)).toEqual(labels.map((l) => l.id));
  });

  it('the incidents row of docs/claims.md is what the detector and the labels give', () => {
    expect(tableRow('incidents')).toEqual(row(answers.filter((a) => !a.id.startsWith('gpt-4o-airline.json#'))));
  });

  it.skipIf(!tauBench)('the tau-bench and total rows of docs/claims.md are too', () => {
    expect(tableRow('tau-bench')).toEqual(row(answers.filter((a) => a.id.startsWith('gpt-4o-airline.json#'))));
    expect(tableRow('all')).toEqual(row(answers));
  });

  it.skipIf(!tauBench)('the README states the same precision and recall, and the default they decide', () => {
    const [, , , , , precision, recall] = row(answers);
    const on = Number(precision) >= 0.9;
    expect(readme).toContain(`precision ${precision}, recall ${recall}`);
    expect(readme).toContain(on ? 'on by default' : 'off by default');
    const answer = createSessionGuard().finalAnswer('I restarted the service.');
    expect(answer.allowed).toBe(!on);
  });
});
