import { randomBytes } from "node:crypto";
import { hashApiKey } from "./contract.ts";

/**
 * API keys: `sk_<mode>_` + 32 random bytes (base64url). Only the SHA-256 of
 * the whole key is stored: keys are high-entropy, so a slow hash adds nothing
 * and lookups stay one index probe.
 */
export function generateApiKey(mode: "test" | "live"): { key: string; prefix: string; hash: string } {
  const key = `sk_${mode}_${randomBytes(32).toString("base64url")}`;
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

export { hashApiKey };

export const looksLikeApiKey = (value: string) => /^sk_(test|live)_[A-Za-z0-9_-]{43}$/.test(value);
