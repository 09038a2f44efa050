/**
 * The documentation holds together: every relative link and `#anchor` in
 * README.md and docs/**\/*.md resolves, and every docs page opens with a
 * `# Title` followed by a one-sentence summary.
 *
 * A link resolves when its file or folder exists, and its anchor, if any, is
 * the GitHub slug of a heading on the target page (a folder's page is its
 * README.md) or an explicit `<a id="…">`. External links (`https:`,
 * `mailto:`) are not fetched. The pages are read line by line: fenced code
 * blocks are skipped and inline code spans blanked, so a link written inside
 * code is not a link. docs/spec/ is a copy of the specification, kept as it
 * came: its pages are link targets, but neither their own links (they point
 * at pages of the original that were not copied) nor their openings are
 * checked.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the checker reads: page text by repository-relative path, and whether a path exists. */
interface Tree {
  read(path: string): string;
  exists(path: string): boolean;
  isDirectory(path: string): boolean;
}

const disk: Tree = {
  read: (path) => readFileSync(join(ROOT, path), 'utf8'),
  exists: (path) => existsSync(join(ROOT, path)),
  isDirectory: (path) => statSync(join(ROOT, path)).isDirectory(),
};

/** Every Markdown file under `dir` (repository-relative, `/`-separated), sorted. */
function markdownUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => posix.join(dir, name.split('\\').join('/')))
    .sort();
}

const FENCE = /^\s*(`{3,}|~{3,})/;

/** The page's lines with fenced code blocks replaced by blank lines (an unclosed fence runs to the end, as in CommonMark). */
function proseLines(text: string): string[] {
  const lines = text.split('\n');
  let fence: string | null = null;
  return lines.map((line) => {
    const open = FENCE.exec(line)?.[1];
    if (fence === null) {
      if (open === undefined) return line;
      fence = open;
      return '';
    }
    // A closing fence: the same character, at least as long, nothing after it.
    if (open !== undefined && open[0] === fence[0] && open.length >= fence.length && line.trim() === open) fence = null;
    return '';
  });
}

/** The paragraphs of the prose (blank-line separated), with inline code spans blanked: a link may span lines, a code span may not leave its paragraph. */
function paragraphs(text: string): string[] {
  return proseLines(text)
    .join('\n')
    .split(/\n\s*\n/)
    .map((block) => block.replace(/(`+)[\s\S]*?\1/g, '``'));
}

/** GitHub's heading slug: lower-case, punctuation dropped except `-` and `_`, each space a `-`. */
function slugOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as GitHub renders it: code spans keep their content, links their text, emphasis and tags go. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '')
    .split(/(`+[^`]*`+)/)
    .map((part, i) =>
      i % 2 === 1
        ? part.replace(/^`+|`+$/g, '')
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
            .replace(/<[^>]+>/g, '')
            .replace(/[*~]/g, '')
            .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1'),
    )
    .join('')
    .trim();
}

/** The anchors of a page: each heading's slug (a repeated slug gets `-1`, `-2`, ...) and every explicit `<a id>` or `name`. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const lines = proseLines(text);
  for (const line of lines) {
    const heading = /^ {0,3}#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      const slug = slugOf(headingText(heading[1]!));
      let unique = slug;
      for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
      anchors.add(unique);
    }
    for (const match of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
}

/** The link targets of a page: inline links and images, reference definitions, and `href`/`src` attributes. */
function linksOf(text: string): string[] {
  const links: string[] = [];
  for (const block of paragraphs(text)) {
    for (const match of block.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push(match[1]!);
    for (const match of block.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) links.push(match[1]!);
    for (const match of block.matchAll(/\b(?:href|src)="([^"]*)"/g)) links.push(match[1]!);
  }
  return links;
}

/** What is wrong with one link of `page` (repository-relative), or null when it resolves. */
function problemOf(page: string, link: string, tree: Tree): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) return null; // external
  const hash = link.indexOf('#');
  const path = decodeURI(hash === -1 ? link : link.slice(0, hash));
  const anchor = hash === -1 ? null : decodeURIComponent(link.slice(hash + 1));
  const joined = path === '' ? page : path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(page), path);
  let target = posix.normalize(joined).replace(/\/$/, '');
  if (target.startsWith('..')) return `${link}: leaves the repository`;
  if (!tree.exists(target)) return `${link}: no such file or folder (${target})`;
  if (anchor === null) return null;
  if (tree.isDirectory(target)) target = posix.join(target, 'README.md');
  if (!target.endsWith('.md') || !tree.exists(target)) return `${link}: an anchor into ${target}, which is no Markdown page`;
  return anchorsOf(tree.read(target)).has(anchor) ? null : `${link}: ${target} has no heading or <a id> '${anchor}'`;
}

/** Every link of the pages that does not resolve, as `page: link: why`. */
function brokenLinks(pages: string[], tree: Tree): string[] {
  return pages.flatMap((page) =>
    linksOf(tree.read(page)).flatMap((link) => {
      const problem = problemOf(page, link, tree);
      return problem === null ? [] : [`${page}: ${problem}`];
    }),
  );
}

/** What is wrong with a docs page's opening (a `# Title`, then a one-sentence paragraph), or null. */
function openingProblem(text: string): string | null {
  const blocks = text
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter((block) => block !== '');
  const [title, summary] = blocks;
  if (title === undefined || !/^# \S[^\n]*$/.test(title)) return 'does not start with a one-line `# Title`';
  if (summary === undefined || /^(#|[-*+>|<]|\d+[.)]\s|`{3}|~{3})/.test(summary)) return 'has no summary paragraph after its title';
  const prose = summary.replace(/(`+)[\s\S]*?\1/g, '``');
  if (!/[.!?]$/.test(prose)) return 'has a summary that does not end as a sentence';
  if (/[.!?]\s/.test(prose)) return 'has a summary of more than one sentence';
  return null;
}

const DOCS = markdownUnder('docs');
const PAGES = ['README.md', ...DOCS.filter((page) => !page.startsWith('docs/spec/'))];

describe('the documentation', () => {
  it('has the pages to check', () => {
    expect(PAGES).toContain('docs/guard.md');
    expect(PAGES.length).toBeGreaterThan(10);
  });

  it('has every relative link and anchor resolving', () => {
    expect(brokenLinks(PAGES, disk)).toEqual([]);
  });

  it('keeps the README a five-minute read: at most 300 lines, the reference in docs/', () => {
    expect(disk.read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('gives the quick start as exactly the two commands of a fresh machine', () => {
    const quickStart = disk.read('README.md').split('## Quick start')[1]?.split('\n## ')[0] ?? '';
    const block = /```sh\n([^`]*)```/.exec(quickStart)?.[1] ?? '';
    expect(block.trim().split('\n')).toEqual(['npm ci && npm start', 'npm test']);
  });

  it.each(PAGES.filter((page) => page !== 'README.md'))('%s opens with a title and a one-sentence summary', (page) => {
    expect(openingProblem(disk.read(page))).toBeNull();
  });
});

describe('the checker', () => {
  /** An in-memory tree: the given pages, plus the folders that hold them. */
  function treeOf(files: Record<string, string>): Tree {
    const folders = new Set(Object.keys(files).flatMap((file) => [dirname(file), dirname(dirname(file))]));
    return {
      read: (path) => files[path] ?? '',
      exists: (path) => path in files || folders.has(path),
      isDirectory: (path) => folders.has(path),
    };
  }

  it('slugs headings as GitHub does', () => {
    expect(slugOf(headingText('Real transcripts: tau-bench airline, GPT-4o'))).toBe('real-transcripts-tau-bench-airline-gpt-4o');
    expect(slugOf(headingText('`@xstate/graph` on `safetyMachine`'))).toBe('xstategraph-on-safetymachine');
    expect(slugOf(headingText('Target-aware verification (DESIGN §5.3–5.8)'))).toBe('target-aware-verification-design-5358');
    expect(slugOf(headingText('`MAX_IN_FLIGHT` and _emphasis_'))).toBe('max_in_flight-and-emphasis');
    expect([...anchorsOf('# A\n\n## Notes\n\n## Notes\n\n```\n# not a heading\n```\n\n<a id="here"></a>\n## Notes')]).toEqual([
      'a',
      'notes',
      'notes-1',
      'here',
      'notes-2',
    ]);
  });

  it('reports a missing file, a missing anchor, and a link that leaves the repository; not links in code or external ones', () => {
    const tree = treeOf({
      'README.md': [
        '# R',
        '',
        'See [the guard](docs/guard.md#methods), [gone](docs/gone.md), [no such part](docs/guard.md#nowhere),',
        '[up](../outside.md), [a folder](docs/) and [multi',
        'line](docs/guard.md#bounds-of-one-session), [web](https://example.com/x.md).',
        '',
        '`[in code](docs/missing.md)`',
        '',
        '```md',
        '[in a fence](docs/missing.md)',
        '```',
      ].join('\n'),
      'docs/guard.md': '# Guard\n\nThe guard.\n\n## Methods\n\n## Bounds of one session\n',
    });
    expect(brokenLinks(['README.md'], tree)).toEqual([
      'README.md: docs/gone.md: no such file or folder (docs/gone.md)',
      "README.md: docs/guard.md#nowhere: docs/guard.md has no heading or <a id> 'nowhere'",
      'README.md: ../outside.md: leaves the repository',
    ]);
  });

  it('reports a page without a title or a one-sentence summary', () => {
    expect(openingProblem('# Title\n\nOne sentence, with `code. Inside` it.\n\nMore.')).toBeNull();
    expect(openingProblem('Text first.\n')).toBe('does not start with a one-line `# Title`');
    expect(openingProblem('# Title\n\n## Section\n')).toBe('has no summary paragraph after its title');
    expect(openingProblem('# Title\n\nOne sentence. And another.\n')).toBe('has a summary of more than one sentence');
    expect(openingProblem('# Title\n\nNo full stop\n')).toBe('has a summary that does not end as a sentence');
  });
});
