/**
 * The error the visualizer's HTTP routes throw for a request they refuse:
 * the server answers it as `{ error }` (`ErrorResponse`) with its status;
 * any other error is a 500.
 */

/** An HTTP error answered as `{ error: message }` with `status`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
