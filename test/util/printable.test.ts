/** `printable`: transcript text made inert for a terminal (hardening: terminal injection). */
import { describe, expect, it } from 'vitest';
import { printable } from '../../src/util/printable.js';

describe('printable', () => {
  it('leaves safe text as it is, non-ASCII letters included', () => {
    expect(printable('pulse_control → réservation')).toBe('pulse_control → réservation');
  });

  it('writes newlines, returns and tabs as escapes', () => {
    expect(printable('a\nb\rc\td')).toBe('a\\nb\\rc\\td');
  });

  it('writes escape sequences and other controls as \\u escapes', () => {
    expect(printable('\u001b[2J\u0007\u007f\u009b')).toBe('\\u001b[2J\\u0007\\u007f\\u009b');
  });

  it('writes bidirectional overrides and line separators as escapes', () => {
    expect(printable('a\u202eb\u2066c\u2028')).toBe('a\\u202eb\\u2066c\\u2028');
  });
});
