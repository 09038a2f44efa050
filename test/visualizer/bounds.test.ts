/**
 * The bounds' helpers (src/visualizer/bounds.ts): nesting counted on raw
 * JSON text before it is parsed, and drops logged once per kind.
 */
import { describe, expect, it } from 'vitest';
import { DropLog, jsonTextDepth } from '../../src/visualizer/bounds.js';

describe('jsonTextDepth', () => {
  it('counts the deepest nesting of arrays and objects', () => {
    expect(jsonTextDepth('{"a":[1,{"b":[]}],"c":{}}', 64)).toBe(4);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(jsonTextDepth('{"a":"[[[{{{\\"[[["}', 64)).toBe(1);
  });

  it('stops one past the limit', () => {
    expect(jsonTextDepth('['.repeat(1_000_000), 64)).toBe(65);
  });

  it('gives a scalar depth 0', () => {
    expect(jsonTextDepth('"x"', 64)).toBe(0);
  });
});

describe('DropLog', () => {
  it('survives a log that throws, and still counts', () => {
    const drops = new DropLog(() => {
      throw new Error('disk full');
    });
    drops.report('kind', 'detail');
    drops.report('kind', 'detail');
    expect(drops.counted()).toEqual({ kind: 2 });
  });

  it('logs the first drop of each kind', () => {
    const lines: string[] = [];
    const drops = new DropLog((line) => lines.push(line));
    for (const kind of ['a', 'b', 'a', 'b', 'a']) drops.report(kind, `first ${kind}`);
    expect(lines).toEqual([
      'pulse-safety visualizer: dropped a: first a (further drops of this kind are counted, not logged)',
      'pulse-safety visualizer: dropped b: first b (further drops of this kind are counted, not logged)',
    ]);
  });
});
