/**
 * Code bash evaluates, seen as code (DESIGN.md §5.5): declarations read
 * after quote removal, variable names only known when the command runs,
 * subscripts bash evaluates, name references and assignments made by an
 * expansion. Each payload is first run by `/bin/bash` in a throwaway
 * directory, so the test shows bash really runs it.
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand } from '../../../src/classify/shell/index.js';
import { bashMakesMarker as bashRuns, hasBash } from '../../support/bash-marker.js';

/** Runs `setup` then `command` with /bin/bash in a new directory; whether it made the file `marker` there. */
function bashMakesMarker(setup: string, command: string): boolean {
  return bashRuns(`${setup}\n${command}`);
}

/** The payload in a variable, as an earlier command (or the environment) may leave it. */
const SUBSCRIPT = "x='a[$(touch marker)]'; a=(1)";

/** The command judged, and the setup bash runs before it to show the payload runs. */
const EVALUATED: [string, string][] = [
  ['declare "$x=1"', SUBSCRIPT],
  ['typeset "$x=1"', SUBSCRIPT],
  ['test -v "$x"', SUBSCRIPT],
  ['[ -v "$x" ]', SUBSCRIPT],
  ['[[ -v $x ]]', SUBSCRIPT],
  ['read "$x" <<< 1', "x='b[$(touch marker)]'; declare -A b"],
  ['unset "$x"', SUBSCRIPT],
  // BASH_ENV is sourced by every non-interactive bash started after it
  ['export "BASH_ENV=./env.sh"; bash -c true', 'echo "touch marker" > env.sh'],
  ['export BASH_EN\\V=./env.sh; bash -c true', 'echo "touch marker" > env.sh'],
  ['export B"A"SH_ENV=./env.sh; bash -c true', 'echo "touch marker" > env.sh'],
  [': ${BASH_ENV:=./env.sh}; export BASH_ENV; bash -c true', 'echo "touch marker" > env.sh; unset BASH_ENV'],
  ['declare -n ref=BASH_ENV; ref=./env.sh; export BASH_ENV; bash -c true', 'echo "touch marker" > env.sh'],
];

describe('code bash evaluates is a write', () => {
  it.skipIf(!hasBash).each(EVALUATED)('%s: bash runs the payload', (command, setup) => {
    expect(bashMakesMarker(setup, command)).toBe(true);
  });

  it.each(EVALUATED)('%s: a write', (command) => {
    expect(classifyShellCommand(command).kind).toBe('write');
  });
});

describe('reasons name the word', () => {
  it.each([
    ['export "BASH_ENV=/dev/stdin"', 'assigning BASH_ENV can change what later commands run'],
    ['export BASH_EN\\V=x', 'assigning BASH_ENV can change what later commands run'],
    ['echo ${BASH_ENV:=x}', 'assigning BASH_ENV can change what later commands run'],
    ['declare -n ref=x', "'declare -n' makes a name reference: an assignment to it changes the variable it names"],
    ['declare "$x=1"', `'declare' takes a variable name only known when it runs ('"$x=1"'), which may assign or evaluate anything`],
    ['export "$x"', `'export' takes a variable name only known when it runs ('"$x"'), which may assign or evaluate anything`],
    ['[[ -v $x ]]', `'[[' takes a variable name only known when it runs ('$x'), which may assign or evaluate anything`],
    [
      "declare 'a[i]=1'",
      "'declare' takes the variable name ''a[i]=1'', whose subscript bash evaluates (variables and command substitutions in it included)",
    ],
    ['export "a b=1"', `'export "a b=1"' is not a declaration this classifier knows`],
  ])('%s', (command, reason) => {
    expect(classifyShellCommand(command).reason).toBe(`shell: ${reason}`);
  });
});
