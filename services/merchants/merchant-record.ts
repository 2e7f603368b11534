import { iso } from "../platform/timestamps.ts";
import { formatAmount } from "../platform/money.ts";
import type { MerchantRow } from "./entities.ts";

/** A merchant as operators see it (REST body): its own rate limit, or null for the RATE_LIMIT_* defaults. */
export const merchantRecord = (m: MerchantRow) => ({
  id: m.id,
  name: m.name,
  createdAt: iso(m.createdAt),
  rateLimitPerSecond: m.rateLimitPerSecond ?? null,
  rateLimitBurst: m.rateLimitBurst ?? null,
  payoutReviewAbove: m.payoutReviewAbove == null ? null : formatAmount(m.payoutReviewAbove),
});
