/**
 * The labels the playground and the replay share: call arguments printed
 * alike, on one line, cut at one length.
 */
import { describe, expect, it } from 'vitest';
import { argsText, short } from '../../src/visualizer/labels.js';

describe('argsText', () => {
  it('prints arguments as compact JSON, a string as itself, none as nothing', () => {
    expect(argsText({ user_id: 'mia' })).toBe('{"user_id":"mia"}');
    expect(argsText('ls  -la\nsrc')).toBe('ls -la src');
    expect(argsText(undefined)).toBe('');
  });

  it('cuts long arguments at 120 characters, the last an ellipsis', () => {
    const text = argsText({ padding: 'x'.repeat(500) });
    expect(text).toHaveLength(120);
    expect(text.endsWith('…')).toBe(true);
  });

  it('never throws on arguments JSON cannot print', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(argsText(cycle)).toBe('(unprintable arguments)');
    expect(argsText(10n)).toBe('(unprintable arguments)');
  });
});

describe('short', () => {
  it('flattens whitespace and leaves short text whole', () => {
    expect(short(' a\n\tb  c ', 80)).toBe('a b c');
  });
});
