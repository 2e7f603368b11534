import { invalid } from "./errors.ts";

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
  return value as Record<string, unknown>;
}
