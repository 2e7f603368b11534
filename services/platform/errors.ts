/**
 * Typed domain failures. Use cases throw these; one translator (rpc/errors.ts)
 * turns them into Connect codes and the gateway keeps one table from Connect
 * codes to HTTP. `code` is the merchant-facing error code (PLAN_NOT_FOUND…).
 */
export type ErrorKind = "invalid" | "not_found" | "conflict" | "failed_precondition" | "unauthenticated" | "rate_limited" | "unavailable";

export class DomainError extends Error {
  readonly code: string;
  readonly kind: ErrorKind;

  constructor(kind: ErrorKind, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DomainError";
    this.kind = kind;
    this.code = code;
  }
}

export const invalid = (code: string, message: string) => new DomainError("invalid", code, message);
export const notFound = (code: string, message: string) => new DomainError("not_found", code, message);
export const conflict = (code: string, message: string) => new DomainError("conflict", code, message);
