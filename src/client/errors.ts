/**
 * Errors of the client: an HTTP answer outside 2xx becomes a MoreauApiError carrying the
 * service's error body (`{ error, message, details }`, schemas/api ErrorBody) and the HTTP
 * status; a connection failure or a timeout becomes a MoreauConnectionError.
 */

export class MoreauApiError extends Error {
  constructor(
    /** HTTP status of the answer (0: an error answer to a stream command, which has none) */
    readonly status: number,
    /** the service's error code (invalid_model, not_found, conflict, ...) */
    readonly code: string,
    message: string,
    /** details of the error body (zod issues with their paths for 400) */
    readonly details?: unknown,
    /** method and path of the request */
    readonly request?: string,
  ) {
    super(message);
    this.name = "MoreauApiError";
  }

  /** The issues of a 400 answer (`details.issues`), as `path: message` lines. */
  issueLines(): string[] {
    const issues = (this.details as { issues?: { path?: unknown[]; message?: string }[] } | null)
      ?.issues;
    if (!Array.isArray(issues)) return [];
    return issues.map(
      (i) =>
        `${Array.isArray(i.path) && i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`,
    );
  }
}

export class MoreauConnectionError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "MoreauConnectionError";
  }
}
