import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

export const Merchant = defineEntity({
  name: "Merchant",
  tableName: "merchants",
  properties: {
    id: p.uuid().primary(),
    name: p.string().length(200),
    createdAt: p.datetime(),
    /** The merchant's own /api/v1 token bucket; null = the RATE_LIMIT_* defaults. */
    rateLimitPerSecond: p.integer().nullable(),
    rateLimitBurst: p.integer().nullable(),
    /** Payouts worth more than this (USD) wait IN_REVIEW (migration 0024); null = no review. */
    payoutReviewAbove: p.decimal("string").precision(38).scale(18).nullable(),
  },
});

/** Only the SHA-256 digest of a key is stored; `prefix` keeps keys recognisable in listings. */
export const ApiKey = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: p.uuid().primary(),
    merchantId: p.uuid(),
    prefix: p.string().length(32),
    keyHash: p.string().length(64).unique(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    /** Stamped by authentication at most once a minute (migration 0034); null = never used. */
    lastUsedAt: p.datetime().nullable(),
  },
});

export type MerchantRow = InferEntity<typeof Merchant>;
export type ApiKeyRow = InferEntity<typeof ApiKey>;
