/**
 * Imported for its effect by the package's entry points (the main entry, the
 * adapters, `testing`, the CLI): loads every parser of the registry
 * (`./parsers.ts`) before the module that imports it runs, so the
 * synchronous classifiers they expose judge exactly as when the parsers were
 * loaded at import. The coding-agent hook does not import it: it loads only
 * the parsers the call in hand needs (issue 25 item 7).
 */
import { loadAllParsers } from './parsers.js';

await loadAllParsers();
