/**
 * Reading a scrape: the Prometheus text exposition format (version 0.0.4) as
 * prom-client writes it, parsed back into families and samples, so tests
 * assert on values and label values rather than on the layout of the text.
 */

/** One sample line: its metric name, its label values (unescaped) and its value. */
export interface ScrapedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One metric family: its HELP text (unescaped), its TYPE and its samples, in the order of the text. */
export interface ScrapedFamily {
  name: string;
  help: string;
  type: string;
  samples: ScrapedSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

function unescape(text: string): string {
  return text.replace(/\\(.)/g, (_match, char: string) => (char === 'n' ? '\n' : char));
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let end = 0;
  for (let match = LABEL.exec(text); match !== null; match = LABEL.exec(text)) {
    labels[match[1]!] = unescape(match[2]!);
    end = LABEL.lastIndex;
  }
  if (end !== text.length) throw new Error(`malformed labels in: ${line}`);
  return labels;
}

/**
 * Parses an exposition into its families, by name. Throws on a line it cannot
 * read, or a sample before any `# TYPE` line of its family.
 */
export function parseExposition(text: string): Map<string, ScrapedFamily> {
  const families = new Map<string, ScrapedFamily>();
  const family = (name: string): ScrapedFamily => {
    let found = families.get(name);
    if (found === undefined) families.set(name, (found = { name, help: '', type: '', samples: [] }));
    return found;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment !== null) {
      if (comment[1] === 'HELP') family(comment[2]!).help = unescape(comment[3]!);
      else family(comment[2]!).type = comment[3]!;
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (sample === null) throw new Error(`unreadable line: ${line}`);
    const owner = families.get(sample[1]!);
    if (owner === undefined || owner.type === '') throw new Error(`sample without a TYPE line: ${line}`);
    owner.samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? '', line), value: Number(sample[3]) });
  }
  return families;
}

/** The value of the sample of `name` whose labels are exactly `labels`; undefined when there is none. */
export function sampleValue(families: Map<string, ScrapedFamily>, name: string, labels: Record<string, string>): number | undefined {
  const key = JSON.stringify(Object.entries(labels).sort());
  return families.get(name)?.samples.find((sample) => JSON.stringify(Object.entries(sample.labels).sort()) === key)?.value;
}
