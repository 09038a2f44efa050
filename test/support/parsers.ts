/**
 * A vitest setup file: loads every parser of the registry before a test file
 * runs, as the package's entry points do (`src/classify/eager.ts`), so tests
 * that import a classifier's module directly judge with every parser.
 */
import { loadAllParsers } from '../../src/classify/parsers.js';

await loadAllParsers();
