import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The suites `npm test` leaves to `npm run test:deep` (CI runs both): those
 * that need more than `npm ci` (Debian's chromium, redis-server, bubblewrap;
 * the coding agents' real binaries; a packed tarball installed with npm), and
 * those that run long or are sensitive to a loaded machine (real MCP servers
 * with idle timers, processes contending for one session file, the path and
 * interpreter enumerations, the examples run as programs). Everything else is
 * in-process and quick; docs/development.md gives the durations.
 */
const DEEP_SUITES = [
  'test/**/*.real.test.ts',
  'test/**/browser*.test.ts',
  'test/**/*.example.test.ts',
  'test/**/*.deep.test.ts',
  'test/adapters/mcp/mcp.test.ts',
  'test/adapters/mcp/shared-store.test.ts',
  'test/examples/live-inspect.test.ts',
  'test/examples/parent-machine.test.ts',
  'test/hooks/session-file.test.ts',
  'test/interpreter/equality.test.ts',
  'test/store/redis-store.test.ts',
  'test/suites/bash-differential.test.ts',
  'test/suites/consumer.test.ts',
  'test/suites/install.test.ts',
  'test/suites/multiprocess.test.ts',
  'test/suites/oracle.test.ts',
  'test/suites/packaging.test.ts',
  'test/suites/paths.test.ts',
];

export default defineConfig({
  test: {
    setupFiles: ['test/support/parsers.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...DEEP_SUITES] },
      },
      { extends: true, test: { name: 'deep', include: DEEP_SUITES } },
    ],
  },
});
