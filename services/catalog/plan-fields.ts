import { invalid } from "../platform/errors.ts";
import { characterCount } from "../platform/text.ts";

/**
 * The rules of a plan's descriptive fields, shared by create and update (the
 * gateway checks the same with JSON schemas; gRPC callers reach these directly).
 */
/** The name as stored: surrounding spaces trimmed, then 1 to 200 characters. */
export function checkPlanName(raw: string): string {
  const name = raw.trim();
  if (!name || characterCount(name) > 200) throw invalid("INVALID_REQUEST", "name: must be 1 to 200 characters (surrounding spaces are trimmed)");
  return name;
}

export function checkExternalReference(value: string | undefined | null): void {
  if (value != null && characterCount(value) > 200) throw invalid("INVALID_REQUEST", "externalReference: must be at most 200 characters");
}

export function checkDescription(value: string | undefined | null): void {
  if (value != null && characterCount(value) > 2000) throw invalid("INVALID_REQUEST", "description: must be at most 2000 characters");
}
