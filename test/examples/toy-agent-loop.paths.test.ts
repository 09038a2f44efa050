/**
 * Runs the example test that ships in the package
 * (examples/toy-agent-loop.paths.test.ts, outside this suite's `test/`
 * folder): importing it registers its tests here. The README tells users
 * to copy it, by its path in the installed package.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import '../../examples/toy-agent-loop.paths.test.js';

describe('the shipped example test', () => {
  it('is the one README.md tells users to copy', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain('node_modules/pulse-safety-fsm/examples/toy-agent-loop.paths.test.ts');
  });
});
