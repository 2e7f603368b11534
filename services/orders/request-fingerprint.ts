import { createHash } from "node:crypto";
import { canonicalJson } from "../platform/canonical-json.ts";

/**
 * SHA-256 of the create request in canonical form (sorted keys, amounts
 * already canonical). A retry with the same externalId must carry the same
 * fingerprint to get the existing order back; anything else is a conflict.
 */
export function requestFingerprint(request: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}
