/**
 * The vitest configuration of `npm run test:mutation` (stryker.config.json):
 * only the test files that exercise machines/ and the core of src/
 * (classifier, adapter, errors), not the browser, CLI or visualizer ones;
 * the quick unit tests run first, so most mutants die before the long
 * model-based and differential tests start.
 */
import { BaseSequencer } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/** Run last, in this order: the long model-based and differential tests. */
const LAST = [
  'test/examples/toy-agent-loop.test.ts',
  'test/testing.test.ts',
  'test/oracle.test.ts',
  'test/paths.test.ts',
];

class QuickTestsFirst extends BaseSequencer {
  async sort(files) {
    const rank = (file) => LAST.findIndex((suffix) => file.moduleId.endsWith(suffix));
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: [
      'test/mutation-gaps.test.ts',
      'test/machines/**/*.test.ts',
      'test/adapter.test.ts',
      'test/classifier.test.ts',
      'test/errors.test.ts',
      'test/parallel.test.ts',
      'test/hostile.test.ts',
      'test/snapshot.test.ts',
      'test/telemetry.test.ts',
      'test/store.test.ts',
      'test/audit.test.ts',
      'test/stately-config.test.ts',
      'test/examples/prometheus.test.ts',
      ...LAST,
    ],
    sequence: { sequencer: QuickTestsFirst },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
