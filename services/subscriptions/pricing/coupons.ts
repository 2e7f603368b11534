import { randomUUID } from "node:crypto";
import { LockMode, type FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { invalid, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { isCurrency } from "../../platform/currencies.ts";
import { amount, compare, formatAmount } from "../../platform/money.ts";
import { parseAmountField } from "../../platform/amount-input.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../../platform/pagination.ts";
import { recordEvent } from "../../events/record-event.ts";
import { COUPON_DURATIONS, COUPON_NAME_MAX, DURATION_IN_PERIODS, type CouponDuration } from "./contract.ts";
import { Coupon, type CouponRow } from "./pricing-entities.ts";
import { couponRecord } from "./coupon-record.ts";

interface CreateCouponInput {
  merchantId: string;
  name: string;
  percentOff?: string | undefined;
  amountOff?: string | undefined;
  currency?: string | undefined;
  duration: string;
  durationInPeriods?: number | undefined;
  maxRedemptions?: number | undefined;
  redeemBy?: Date | undefined;
  appliesToPlanIds?: string[] | undefined;
  metadata: Record<string, unknown>;
}

export const MAX_REDEMPTIONS_LIMIT = 1_000_000_000;
const APPLIES_TO_PLANS_MAX = 100;

export const couponNotFound = (id: string) => notFound("COUPON_NOT_FOUND", `coupon ${id} not found`);

/**
 * Creates a coupon (coupon.created in the same transaction). The gateway's
 * schema checks the same rules; they are checked again for gRPC callers, each
 * bad combination a 400 naming its field.
 */
export async function createCoupon(ctx: UseCaseContext, input: CreateCouponInput): Promise<CouponRow> {
  const name = input.name.trim();
  if (name.length < 1 || [...input.name].length > COUPON_NAME_MAX)
    throw invalid("INVALID_REQUEST", `name: must be 1 to ${COUPON_NAME_MAX} characters (not only spaces)`);
  const hasPercent = input.percentOff !== undefined;
  const hasAmount = input.amountOff !== undefined;
  if (hasPercent && hasAmount) throw invalid("INVALID_REQUEST", "percentOff: send either percentOff or amountOff, not both");
  if (!hasPercent && !hasAmount) throw invalid("INVALID_REQUEST", "percentOff: one of percentOff or amountOff is required");
  let percentOff: string | null = null;
  let amountOff: string | null = null;
  if (hasPercent) {
    const value = parseAmountField("percentOff", input.percentOff!, { positive: true });
    if (compare(value, amount("100")) > 0) throw invalid("INVALID_REQUEST", "percentOff: must be greater than 0 and at most 100");
    if (input.currency !== undefined) throw invalid("INVALID_REQUEST", "currency: only with amountOff (a percentOff applies in any currency)");
    percentOff = formatAmount(value);
  } else {
    amountOff = formatAmount(parseAmountField("amountOff", input.amountOff!, { positive: true }));
    if (input.currency === undefined) throw invalid("INVALID_REQUEST", "currency: is required with amountOff");
    if (!isCurrency(input.currency)) throw invalid("INVALID_REQUEST", `currency: ${input.currency} is not a supported currency`);
  }
  if (!(COUPON_DURATIONS as readonly string[]).includes(input.duration))
    throw invalid("INVALID_REQUEST", `duration: must be one of ${COUPON_DURATIONS.join(", ")}`);
  const duration = input.duration as CouponDuration;
  if (duration === "REPEATING") {
    const n = input.durationInPeriods;
    if (n === undefined) throw invalid("INVALID_REQUEST", "durationInPeriods: is required when duration is REPEATING");
    if (!Number.isInteger(n) || n < DURATION_IN_PERIODS.min || n > DURATION_IN_PERIODS.max) {
      throw invalid("INVALID_REQUEST", `durationInPeriods: must be an integer from ${DURATION_IN_PERIODS.min} to ${DURATION_IN_PERIODS.max}`);
    }
  } else if (input.durationInPeriods !== undefined) {
    throw invalid("INVALID_REQUEST", `durationInPeriods: only with duration REPEATING (${duration} has no period count)`);
  }
  if (
    input.maxRedemptions !== undefined &&
    (!Number.isInteger(input.maxRedemptions) || input.maxRedemptions < 1 || input.maxRedemptions > MAX_REDEMPTIONS_LIMIT)
  ) {
    throw invalid("INVALID_REQUEST", `maxRedemptions: must be an integer from 1 to ${MAX_REDEMPTIONS_LIMIT}`);
  }
  const now = ctx.clock.now();
  if (input.redeemBy !== undefined && input.redeemBy.getTime() <= now.getTime()) throw invalid("INVALID_REQUEST", "redeemBy: must be in the future");
  let planIds: string[] | null = null;
  if (input.appliesToPlanIds !== undefined) {
    const ids = input.appliesToPlanIds;
    if (ids.length < 1 || ids.length > APPLIES_TO_PLANS_MAX)
      throw invalid("INVALID_REQUEST", `appliesToPlanIds: must list 1 to ${APPLIES_TO_PLANS_MAX} plan ids`);
    ids.forEach((id, k) => {
      if (!isUuid(id)) throw invalid("INVALID_REQUEST", `appliesToPlanIds.${k}: must be a uuid`);
    });
    if (new Set(ids.map((id) => id.toLowerCase())).size !== ids.length) throw invalid("INVALID_REQUEST", "appliesToPlanIds: lists a plan id twice");
    planIds = ids.map((id) => id.toLowerCase());
  }

  return ctx.em.transactional(async (em) => {
    const coupon = em.create(Coupon, {
      id: randomUUID(),
      merchantId: input.merchantId,
      name,
      percentOff,
      amountOff,
      currency: amountOff === null ? null : input.currency!,
      duration,
      durationInPeriods: duration === "REPEATING" ? input.durationInPeriods! : null,
      maxRedemptions: input.maxRedemptions ?? null,
      timesRedeemed: 0,
      redeemBy: input.redeemBy ?? null,
      appliesToPlanIds: planIds,
      metadata: input.metadata,
      valid: true,
      deletedAt: null,
      createdAt: now,
    });
    recordEvent(em, ctx.clock, { merchantId: input.merchantId, type: "coupon.created", data: couponRecord(coupon) });
    return coupon;
  });
}

export async function getCoupon(ctx: UseCaseContext, merchantId: string, id: string): Promise<CouponRow> {
  const coupon = isUuid(id) ? await ctx.em.findOne(Coupon, { id: id.toLowerCase(), merchantId }) : null;
  if (!coupon) throw couponNotFound(id);
  return coupon;
}

export async function listCoupons(
  ctx: UseCaseContext,
  input: { merchantId: string; limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<CouponRow>> {
  const limit = clampLimit(input.limit);
  const where = { merchantId: input.merchantId, ...afterCursor(input.cursor) } as FilterQuery<CouponRow>;
  return toPage(await ctx.em.find(Coupon, where, { orderBy: KEYSET_ORDER, limit: limit + 1 }), limit);
}

/**
 * DELETE: the coupon stops taking new redemptions (valid = false, its codes
 * with it); discounts already applied run their course. Idempotent.
 */
export async function deleteCoupon(ctx: UseCaseContext, merchantId: string, id: string): Promise<CouponRow> {
  return ctx.em.transactional(async (em) => {
    const coupon = isUuid(id) ? await em.findOne(Coupon, { id: id.toLowerCase(), merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
    if (!coupon) throw couponNotFound(id);
    if (coupon.valid) {
      coupon.valid = false;
      coupon.deletedAt = ctx.clock.now();
    }
    return coupon;
  });
}
