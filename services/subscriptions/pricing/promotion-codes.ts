import { randomUUID } from "node:crypto";
import type { FilterQuery } from "@mikro-orm/core";
import type { UseCaseContext } from "../../platform/use-case.ts";
import { conflict, invalid, notFound } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../../platform/pagination.ts";
import { PROMOTION_CODE_PATTERN } from "./contract.ts";
import { PromotionCode, type PromotionCodeRow } from "./pricing-entities.ts";
import { couponNotFound, getCoupon, MAX_REDEMPTIONS_LIMIT } from "./coupons.ts";
import { insertPromotionCode } from "./discount-store.ts";
import { noteAuditObject } from "../../platform/audit/call-context.ts";

interface CreatePromotionCodeInput {
  merchantId: string;
  couponId: string;
  code: string;
  maxRedemptions?: number | undefined;
  expiresAt?: Date | undefined;
  active?: boolean | undefined;
}

const CODE = new RegExp(PROMOTION_CODE_PATTERN);

export const promotionCodeNotFound = (what: string) => notFound("PROMOTION_CODE_NOT_FOUND", `promotion code ${what} not found`);

/**
 * A customer-facing code for one of the merchant's coupons. Codes are stored
 * as sent and unique per merchant whatever their case (a unique index on
 * upper(code): parallel creates of "SPRING" and "spring" get one 201 and one
 * 409 PROMOTION_CODE_EXISTS).
 */
export async function createPromotionCode(ctx: UseCaseContext, input: CreatePromotionCodeInput): Promise<PromotionCodeRow> {
  if (!CODE.test(input.code)) throw invalid("INVALID_REQUEST", "code: must be 3 to 50 of A-Z, 0-9 and - (case-insensitive)");
  if (
    input.maxRedemptions !== undefined &&
    (!Number.isInteger(input.maxRedemptions) || input.maxRedemptions < 1 || input.maxRedemptions > MAX_REDEMPTIONS_LIMIT)
  ) {
    throw invalid("INVALID_REQUEST", `maxRedemptions: must be an integer from 1 to ${MAX_REDEMPTIONS_LIMIT}`);
  }
  const now = ctx.clock.now();
  if (input.expiresAt !== undefined && input.expiresAt.getTime() <= now.getTime()) throw invalid("INVALID_REQUEST", "expiresAt: must be in the future");
  if (!isUuid(input.couponId)) throw couponNotFound(input.couponId);
  const coupon = await getCoupon(ctx, input.merchantId, input.couponId);
  if (!coupon.valid) throw conflict("COUPON_NOT_APPLICABLE", "couponId: the coupon was deleted: it takes no new codes or redemptions");
  const row = {
    id: randomUUID(),
    merchantId: input.merchantId,
    couponId: coupon.id,
    code: input.code,
    maxRedemptions: input.maxRedemptions ?? null,
    timesRedeemed: 0,
    expiresAt: input.expiresAt ?? null,
    active: input.active ?? true,
    createdAt: now,
  };
  noteAuditObject("PromotionCode", row);
  if (!(await insertPromotionCode(ctx.em, row)))
    throw conflict("PROMOTION_CODE_EXISTS", `code: the promotion code ${input.code} already exists (codes are unique whatever their case)`);
  return row as PromotionCodeRow;
}

export async function getPromotionCode(ctx: UseCaseContext, merchantId: string, id: string): Promise<PromotionCodeRow> {
  const row = isUuid(id) ? await ctx.em.findOne(PromotionCode, { id: id.toLowerCase(), merchantId }) : null;
  if (!row) throw promotionCodeNotFound(id);
  return row;
}

export async function listPromotionCodes(
  ctx: UseCaseContext,
  input: { merchantId: string; couponId?: string | undefined; limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<PromotionCodeRow>> {
  const limit = clampLimit(input.limit);
  if (input.couponId !== undefined && !isUuid(input.couponId)) return { items: [], hasMore: false, nextCursor: undefined };
  const where = {
    merchantId: input.merchantId,
    ...(input.couponId !== undefined && { couponId: input.couponId.toLowerCase() }),
    ...afterCursor(input.cursor),
  } as FilterQuery<PromotionCodeRow>;
  return toPage(await ctx.em.find(PromotionCode, where, { orderBy: KEYSET_ORDER, limit: limit + 1 }), limit);
}
