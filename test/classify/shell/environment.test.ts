/**
 * Variables in programs' environment are an allow-list too: `X=v cmd`,
 * `export X=v`, `export X`, `declare -x X=v` and `env X=v cmd` are writes
 * unless the command table knows X to be inert (`inertVariables`); a shell
 * variable alone (`X=v`, `for X in`, `read X`) changes only the shell.
 *
 * Spec: DESIGN.md §5.5.
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand, defaultShellTable } from '../../../src/classify/shell/index.js';

const kind = (command: string) => classifyShellCommand(command, { cwd: '/repo' });

describe('variables put in the environment of programs', () => {
  it.each(['FOO=1 true', 'export FOO=1', 'export FOO', 'declare -x FOO=1', 'declare -gx FOO', 'typeset -x FOO=1', 'env FOO=1 true'])(
    '%s is a write naming the variable',
    (command) => {
      const result = kind(command);
      expect(result.kind).toBe('write');
      expect(result.reason).toContain('FOO');
    },
  );

  it.each(['LANG=C true', 'LC_ALL=C true', 'export TZ=UTC', 'env NO_COLOR=1 true', 'export LC_MESSAGES'])(
    '%s is a read (inert)',
    (command) => {
      expect(kind(command).kind).toBe('read');
    },
  );

  it.each(['FOO=1', 'FOO=1; true', 'declare FOO=1', 'local_var=1', 'readonly FOO=1'])('%s changes only the shell', (command) => {
    expect(kind(command).kind).toBe('read');
  });

  it('a listed variable stays a write in either scope, and its listed values are reads', () => {
    expect(kind('PATH=/tmp').kind).toBe('write');
    expect(kind('GIT_PAGER=cat true').kind).toBe('read');
    expect(kind('GIT_PAGER=less true').kind).toBe('write');
  });

  it('every inert variable of the shipped table is a read as a prefix assignment', () => {
    for (const name of defaultShellTable.inertVariables ?? []) {
      const variable = name.replace(/\*$/, 'X');
      expect(kind(`${variable}=1 true`).kind, variable).toBe('read');
    }
  });
});
