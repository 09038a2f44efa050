/**
 * `TranscriptError`: a recorded transcript that cannot be read.
 */
/** A transcript that cannot be read. `message` names the source and the position. */
export class TranscriptError extends Error {
  /** Always `TRANSCRIPT_UNREADABLE`, so callers can branch on it as on the other errors' codes. */
  readonly code = 'TRANSCRIPT_UNREADABLE';
  readonly source: string;
  readonly position: string;

  constructor(source: string, position: string, problem: string) {
    super(`${source}: ${position}: ${problem}`);
    this.name = 'TranscriptError';
    this.source = source;
    this.position = position;
  }
}
