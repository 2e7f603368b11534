import type { UseCaseContext } from "../platform/use-case.ts";
import { DomainError } from "../platform/errors.ts";
import { ApiKey } from "./entities.ts";
import { hashApiKey, looksLikeApiKey } from "./api-key-secret.ts";

export async function authenticateApiKey(ctx: UseCaseContext, apiKey: string): Promise<{ merchantId: string; keyId: string }> {
  // The digest lookup is by exact hash, so timing reveals nothing about stored keys.
  const key = looksLikeApiKey(apiKey) ? await ctx.em.findOne(ApiKey, { keyHash: hashApiKey(apiKey) }) : null;
  if (!key || key.revokedAt) throw new DomainError("unauthenticated", "INVALID_API_KEY", "missing, unknown or revoked API key");
  return { merchantId: key.merchantId, keyId: key.id };
}
