/**
 * `CatalogError`: a classification catalog that does not validate.
 *
 * Spec: DESIGN.md §2 (classification as data).
 */
/**
 * A classification catalog that does not validate. `message` names the file
 * (when known) and the bad entry by its path, e.g.
 * `catalog 'mine': tools.my_tool.cases.get: Invalid option: expected one of ...`.
 */
export class CatalogError extends Error {
  /** Always `CATALOG_INVALID`, so callers can branch on it as on the other errors' codes. */
  readonly code = 'CATALOG_INVALID';
  /** The path of the first bad entry, e.g. `['tools', 'my_tool', 'cases', 'get']`. */
  readonly path: readonly (string | number)[];

  constructor(message: string, path: readonly (string | number)[] = []) {
    super(message);
    this.name = 'CatalogError';
    this.path = path;
  }
}
