/**
 * The vitest configuration of `npm run test:mutation` (stryker.config.json):
 * only the test files that exercise machines/ and the core of src/
 * (classifier, adapter, errors), not the browser, CLI or visualizer ones;
 * the quick unit tests run first, so most mutants die before the long
 * differential tests start.
 *
 * Left out as well: test/suites/paths.test.ts, test/testing/testing.test.ts and the toy
 * agent loop's test. They replay the same generated paths that
 * test/suites/oracle.test.ts replays, where every step's decision and session are
 * compared with the independent oracle, a stronger check than their
 * invariants; with them, every surviving mutant cost about a minute on two
 * cores instead of about twenty seconds.
 */
import { BaseSequencer } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/** Run last: the long differential tests. */
const LAST = ['test/suites/oracle.test.ts'];

class QuickTestsFirst extends BaseSequencer {
  async sort(files) {
    const rank = (file) => LAST.findIndex((suffix) => file.moduleId.endsWith(suffix));
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: [
      'test/machines/**/*.test.ts',
      'test/guard/session-guard.test.ts',
      'test/classify/catalog/classifier.test.ts',
      'test/errors/errors.test.ts',
      'test/suites/parallel.test.ts',
      'test/suites/hostile.test.ts',
      'test/guard/snapshot.test.ts',
      'test/telemetry/metrics.test.ts',
      'test/store/session-store.test.ts',
      'test/audit/audit.test.ts',
      'test/charts/stately-config.test.ts',
      'test/examples/prometheus.test.ts',
      ...LAST,
    ],
    setupFiles: ['test/support/parsers.ts'],
    sequence: { sequencer: QuickTestsFirst },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
