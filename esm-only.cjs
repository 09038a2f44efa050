// pulse-safety-fsm is an ES module only; this file answers `require` with the fix instead of Node's
// ERR_PACKAGE_PATH_NOT_EXPORTED (package.json `exports`, the `require` condition of every entry).
throw new Error(
  "pulse-safety-fsm is ESM only: import it (import { createSessionGuard } from 'pulse-safety-fsm'), " +
    "or from CommonJS load it with await import('pulse-safety-fsm'); see docs/install.md",
);
