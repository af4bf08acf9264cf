/**
 * Errors split by audience, each with a string code: `NoEffectError` is thrown by a tool to say the call
 * failed *before any effect* (a refused precondition), the one kind of failure that releases an
 * idempotency key instead of leaving it IN_DOUBT (docs/idempotency.md).
 */
export class NoEffectError extends Error {
  readonly code: string;
  constructor(message: string, code = "precondition_failed") {
    super(message);
    this.name = "NoEffectError";
    this.code = code;
  }
}

/** An operator-facing error with a stable string code: bad configuration, bad CLI input, a store that is down. */
export class ToolgateError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ToolgateError";
    this.code = code;
  }
}
