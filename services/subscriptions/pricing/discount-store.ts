import type { EntityManager } from "@mikro-orm/postgresql";

/** The statements of discounts: coupons and their promotion codes. Each caller passes its own EntityManager (its transaction). */

/** The id of the merchant's promotion code `code`, whatever its case (codes are unique per merchant on upper(code)). */
export async function promotionCodeIdByCode(em: EntityManager, merchantId: string, code: string): Promise<string | undefined> {
  const [row] = await em.execute<{ id: string }[]>("select id from promotion_codes where merchant_id = ? and upper(code) = upper(?)", [merchantId, code]);
  return row?.id;
}

/**
 * Counts one redemption of the promotion code if it may still be redeemed at
 * `now` (active, not expired, not used up) and returns its new count;
 * undefined when it may not. One conditional update: parallel redemptions
 * never pass maxRedemptions (the row lock serialises them and each re-checks
 * the count it sees).
 */
export async function redeemPromotionCode(em: EntityManager, id: string, now: Date): Promise<number | undefined> {
  const [taken] = await em.execute<{ times_redeemed: number }[]>(
    `update promotion_codes set times_redeemed = times_redeemed + 1
      where id = ? and active and (expires_at is null or expires_at > ?) and (max_redemptions is null or times_redeemed < max_redemptions)
      returning times_redeemed`,
    [id, now],
  );
  return taken ? Number(taken.times_redeemed) : undefined;
}

/** The same for the coupon (valid, not past redeem_by, not used up): its new count, or undefined. */
export async function redeemCoupon(em: EntityManager, id: string, now: Date): Promise<number | undefined> {
  const [redeemed] = await em.execute<{ times_redeemed: number }[]>(
    `update coupons set times_redeemed = times_redeemed + 1
      where id = ? and valid and (redeem_by is null or redeem_by > ?) and (max_redemptions is null or times_redeemed < max_redemptions)
      returning times_redeemed`,
    [id, now],
  );
  return redeemed ? Number(redeemed.times_redeemed) : undefined;
}

/**
 * Writes a new promotion code unless the merchant has one with the same code
 * whatever its case (the unique index on upper(code) decides, so parallel
 * creates of "SPRING" and "spring" write one). Returns false when it exists.
 */
export async function insertPromotionCode(
  em: EntityManager,
  row: {
    id: string;
    merchantId: string;
    couponId: string;
    code: string;
    maxRedemptions: number | null;
    expiresAt: Date | null;
    active: boolean;
    createdAt: Date;
  },
): Promise<boolean> {
  const inserted = await em.execute<{ id: string }[]>(
    `insert into promotion_codes (id, merchant_id, coupon_id, code, max_redemptions, times_redeemed, expires_at, active, created_at)
     values (?, ?, ?, ?, ?, 0, ?, ?, ?) on conflict (merchant_id, upper(code)) do nothing returning id`,
    [row.id, row.merchantId, row.couponId, row.code, row.maxRedemptions, row.expiresAt, row.active, row.createdAt],
  );
  return inserted.length > 0;
}
