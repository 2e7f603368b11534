import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../platform/clock.ts";
import type { UseCaseContext } from "../platform/use-case.ts";
import { ApiKey } from "./entities.ts";
import { generateApiKey } from "./api-key-secret.ts";
import { getMerchant } from "./get-merchant.ts";

export async function createApiKey(ctx: UseCaseContext, input: { merchantId: string; keyMode: "test" | "live" }): Promise<{ id: string; apiKey: string }> {
  await getMerchant(ctx, input.merchantId);
  return ctx.em.transactional(async (em) => issueApiKey(em, ctx.clock, input.merchantId, input.keyMode));
}

/** Adds a new key to the unit of work; the full key exists only in the return value. */
export function issueApiKey(em: EntityManager, clock: Clock, merchantId: string, mode: "test" | "live") {
  const generated = generateApiKey(mode);
  const row = em.create(ApiKey, {
    id: randomUUID(),
    merchantId,
    prefix: generated.prefix,
    keyHash: generated.hash,
    createdAt: clock.now(),
    revokedAt: null,
    lastUsedAt: null,
  });
  return { id: row.id, apiKey: generated.key };
}
