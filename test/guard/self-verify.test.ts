/**
 * `selfVerifies`: the original's rule for a write whose result reports its
 * own effect checked.
 *
 * Spec: DESIGN.md §1 ("Write self-verification").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { selfVerifies } from '../../src/guard/self-verify.js';

describe('selfVerifies (DESIGN §1)', () => {
  it.each([
    ['a JSON object with verification.ok true', '{"verification": {"ok": true}}'],
    ['text before the object', 'restarted nginx: {"verification": {"ok": true, "exit_code": 0}}'],
    ['the object among other members', '{"status": "ok", "verification": {"ok": true, "checked": ["a"]}}'],
    ['whitespace after the object', '{"verification": {"ok": true}}\n'],
  ])('is true for %s', (_, result) => {
    expect(selfVerifies(result)).toBe(true);
  });

  it.each([
    ['"ok": "true" (a string)', '{"verification": {"ok": "true"}}'],
    ['"ok": false', '{"verification": {"ok": false}}'],
    ['"ok": 1', '{"verification": {"ok": 1}}'],
    ['a missing ok', '{"verification": {}}'],
    ['a missing verification', '{"ok": true}'],
    ['verification that is not an object', '{"verification": true}'],
    ['verification that is an array', '{"verification": [true]}'],
    ['malformed JSON', '{"verification": {"ok": true}'],
    ['text after the object', '{"verification": {"ok": true}} done'],
    ['no object at all', 'verification ok'],
    ['an empty string', ''],
    ['a later object after a first one that fails to parse', '{oops} {"verification": {"ok": true}}'],
  ])('is false for %s', (_, result) => {
    expect(selfVerifies(result)).toBe(false);
  });

  it.each([
    ['a key spelled with one \\u escape', '{"\\u0076erification": {"ok": true}}'],
    [
      'a key spelled wholly with \\u escapes',
      `{"${[...'verification'].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}": {"ok": true}}`,
    ],
    ['an upper-case \\u escape', '{"verificatio\\u006E": {"ok": true}}'],
  ])('is true for %s (JSON reads it as verification)', (_, result) => {
    expect(selfVerifies(result)).toBe(true);
  });

  describe('text that cannot name verification', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('is false without being parsed when it spells verification neither plainly nor with a \\u escape', () => {
      const parse = vi.spyOn(JSON, 'parse');
      expect(selfVerifies('{"status": "ok", "reservation": {"flights": [1, 2]}}')).toBe(false);
      expect(parse).not.toHaveBeenCalled();
    });

    it('is false without being parsed when the word comes only before the first {', () => {
      const parse = vi.spyOn(JSON, 'parse');
      expect(selfVerifies('verification done: {"ok": true}')).toBe(false);
      expect(parse).not.toHaveBeenCalled();
    });

    it('is parsed when it has a \\u escape, even without the word', () => {
      const parse = vi.spyOn(JSON, 'parse');
      expect(selfVerifies('{"note": "caf\\u00e9"}')).toBe(false);
      expect(parse).toHaveBeenCalledTimes(1);
    });
  });

  it('reads an object result directly', () => {
    expect(selfVerifies({ verification: { ok: true } })).toBe(true);
    expect(selfVerifies({ verification: { ok: 'true' } })).toBe(false);
  });

  it.each([undefined, null, 42, true, ['{"verification":{"ok":true}}'], [{ verification: { ok: true } }]])(
    'is false for %j, which is neither text nor an object',
    (result) => {
      expect(selfVerifies(result)).toBe(false);
    },
  );

  it('does not run getters: an inherited or accessor ok is no self-verification', () => {
    const verification = Object.defineProperty({}, 'ok', { get: () => true });
    expect(selfVerifies({ verification })).toBe(false);
    expect(selfVerifies({ verification: Object.create({ ok: true }) })).toBe(false);
  });

  it('never throws, even on a proxy whose traps throw', () => {
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor: () => {
          throw new Error('trap');
        },
      },
    );
    expect(selfVerifies(hostile)).toBe(false);
    expect(selfVerifies({ verification: hostile })).toBe(false);
  });

  it('never throws on JSON nested deeper than the parser goes', () => {
    const deep = `{"verification":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    expect(selfVerifies(deep)).toBe(false);
  });
});
