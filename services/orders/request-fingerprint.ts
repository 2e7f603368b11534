import { createHash } from "node:crypto";

/**
 * SHA-256 of the create request in canonical form (sorted keys, amounts
 * already canonical). A retry with the same externalId must carry the same
 * fingerprint to get the existing order back; anything else is a conflict.
 */
export function requestFingerprint(request: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}
