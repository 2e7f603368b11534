import type { UseCaseContext } from "../platform/use-case.ts";
import { notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { ApiKey } from "./entities.ts";
import type { AnnounceRevocation } from "./key-revocations.ts";

/**
 * Revoking is idempotent: a revoked key stays revoked with its first
 * revocation time. After the commit the revocation is announced so gateways
 * drop their cached lookup of the key.
 */
export async function revokeApiKey(ctx: UseCaseContext, input: { merchantId: string; keyId: string }, announce: AnnounceRevocation): Promise<void> {
  const key = isUuid(input.keyId) && isUuid(input.merchantId) ? await ctx.em.findOne(ApiKey, { id: input.keyId, merchantId: input.merchantId }) : null;
  if (!key) throw notFound("API_KEY_NOT_FOUND", `API key ${input.keyId} not found`);
  if (!key.revokedAt) {
    key.revokedAt = ctx.clock.now();
    await ctx.em.flush();
  }
  await announce(key.keyHash);
}
