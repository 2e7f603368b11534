import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { parseAmountField } from "../platform/amount-input.ts";
import { formatAmount } from "../platform/money.ts";
import { Merchant, type MerchantRow } from "./entities.ts";
import { getMerchant } from "./get-merchant.ts";
import { MERCHANT_RATE_LIMIT_MAX, MERCHANT_RATE_LIMIT_MIN } from "./contract.ts";

/** Per field: a number sets it, null = back to the RATE_LIMIT_* default, undefined = unchanged. */
interface RateLimitInput {
  rateLimitPerSecond?: number | null;
  rateLimitBurst?: number | null;
  /** USD; payouts worth more wait IN_REVIEW. */
  payoutReviewAbove?: string | null | undefined;
}

/** An operator sets one merchant's own token bucket (the gateway enforces it). */
export async function setMerchantRateLimit(ctx: UseCaseContext, merchantId: string, input: RateLimitInput): Promise<MerchantRow> {
  const { payoutReviewAbove, ...limits } = input;
  const changes = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) as RateLimitInput;
  for (const [field, value] of Object.entries(changes)) {
    if (value !== null && (!Number.isInteger(value) || value < MERCHANT_RATE_LIMIT_MIN || value > MERCHANT_RATE_LIMIT_MAX)) {
      throw invalid("INVALID_REQUEST", `${field}: must be an integer from ${MERCHANT_RATE_LIMIT_MIN} to ${MERCHANT_RATE_LIMIT_MAX}, or null for the default`);
    }
  }
  if (payoutReviewAbove !== undefined) {
    changes.payoutReviewAbove = payoutReviewAbove === null ? null : formatAmount(parseAmountField("payoutReviewAbove", payoutReviewAbove));
  }
  const merchant = await getMerchant(ctx, merchantId);
  if (Object.keys(changes).length) await ctx.em.nativeUpdate(Merchant, { id: merchant.id }, changes);
  return Object.assign(merchant, changes);
}
