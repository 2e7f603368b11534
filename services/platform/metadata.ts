import { invalid } from "./errors.ts";
import { findInexactNumber } from "./exact-numbers.ts";
import { findKeyProblem } from "./json-keys.ts";

/** Metadata crosses RPC as JSON text; it must be an object. Empty text means {}. */
export function parseMetadataJson(text: string): Record<string, unknown> {
  if (!text) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("INVALID_REQUEST", "metadata: must be a JSON object");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid("INVALID_REQUEST", "metadata: must be a JSON object");
  }
  // Postgres jsonb refuses the NUL character in any string: refuse it here as bad input, not a 500.
  if (hasNul(value)) throw invalid("INVALID_REQUEST", "metadata: keys and values must not contain the NUL character (\\u0000)");
  // Stored as sent or refused: a key sent twice (JSON.parse kept the last) or __proto__ is named by its path.
  const keyProblem = findKeyProblem(text, "metadata");
  if (keyProblem) throw invalid("INVALID_REQUEST", keyProblem.message);
  // Stored exactly or refused: a number that would not come back identical is named by its key path.
  const inexact = findInexactNumber(text, "metadata");
  if (inexact) throw invalid("INVALID_REQUEST", inexact.message);
  return value as Record<string, unknown>;
}

function hasNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(hasNul);
  if (value && typeof value === "object") return Object.entries(value).some(([k, v]) => k.includes("\u0000") || hasNul(v));
  return false;
}
