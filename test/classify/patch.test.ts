/** The files of an apply_patch envelope. */
import { describe, expect, it } from 'vitest';
import { MAX_PATCH_FILES, patchFiles } from '../../src/classify/patch.js';

describe('patchFiles', () => {
  it('names every file a header adds, updates, deletes or moves to, once each, in order', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: a.txt',
      '+hello',
      '*** Update File: src/b.ts',
      '*** Move to: src/c.ts',
      '@@ fn',
      '-old',
      '+new',
      '*** Delete File: /abs/d',
      '*** Update File: a.txt',
      '*** End Patch',
      '',
    ].join('\n');
    expect(patchFiles(patch)).toEqual(['a.txt', 'src/b.ts', 'src/c.ts', '/abs/d']);
  });

  it('reads CRLF lines and leading blank lines', () => {
    expect(patchFiles('\r\n*** Begin Patch\r\n*** Delete File: x \r\n*** End Patch\r\n')).toEqual(['x']);
  });

  it('a content line that looks like a header is content', () => {
    expect(patchFiles('*** Begin Patch\n*** Add File: a\n+*** Delete File: /etc/passwd\n *** Update File: b\n*** End Patch')).toEqual([
      'a',
    ]);
  });

  it('is null for anything that is not a patch naming files', () => {
    expect(patchFiles('rm -rf /')).toBeNull();
    expect(patchFiles('echo hi\n*** Begin Patch\n*** Add File: a\n*** End Patch')).toBeNull();
    expect(patchFiles('*** Begin Patch\n*** End Patch')).toBeNull();
    expect(patchFiles('*** Begin Patch\n*** Add File:   \n*** End Patch')).toBeNull();
    expect(patchFiles({ command: '*** Begin Patch' })).toBeNull();
    expect(patchFiles(undefined)).toBeNull();
  });

  it(`is null past ${MAX_PATCH_FILES} files`, () => {
    const many = (n: number) =>
      ['*** Begin Patch', ...Array.from({ length: n }, (_, i) => `*** Delete File: f${i}`), '*** End Patch'].join('\n');
    expect(patchFiles(many(MAX_PATCH_FILES))).toHaveLength(MAX_PATCH_FILES);
    expect(patchFiles(many(MAX_PATCH_FILES + 1))).toBeNull();
  });
});
