/**
 * `SnapshotError`: a persisted session snapshot that does not validate.
 */
/**
 * A persisted snapshot that does not validate. `message` names the field,
 * e.g. `snapshot: inFlight[0].kind: Invalid option: expected one of ...`.
 * A `TypeError`, as the value is not a snapshot of this machine.
 */
export class SnapshotError extends TypeError {
  /** Always `SNAPSHOT_INVALID`, so callers can branch on it as on the other errors' codes. */
  readonly code = 'SNAPSHOT_INVALID';
  /** The path of the first bad field, e.g. `['inFlight', 0, 'kind']`. */
  readonly path: readonly (string | number)[];

  constructor(message: string, path: readonly (string | number)[] = []) {
    super(message);
    this.name = 'SnapshotError';
    this.path = path;
  }
}
