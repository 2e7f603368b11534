import type { EntityManager } from "@mikro-orm/postgresql";
import { statusIn } from "../../platform/status-machine.ts";
import { VISIBLE_REFUND_STATUSES } from "./contract.ts";

/** Queries of the refund use cases; each runs in the caller's transaction. */

/** What counts against a charge: every refund not FAILED, the ones a merchant sees (PENDING reserves its amount). */
const RESERVING_STATUSES = VISIBLE_REFUND_STATUSES;

/** The charge's refunded and reserved totals, in its currency and in its asset, as exact decimal text. */
export async function reservedRefundTotals(em: EntityManager, chargeId: string): Promise<{ amount: string; assetAmount: string }> {
  const [reserved] = await em.execute<{ amount: string; asset_amount: string }[]>(
    `select coalesce(sum(amount), 0)::text as amount, coalesce(sum(asset_amount), 0)::text as asset_amount
       from subscription_refunds where charge_id = ? and ${statusIn("status", RESERVING_STATUSES)}`,
    [chargeId],
  );
  return { amount: reserved!.amount, assetAmount: reserved!.asset_amount };
}

/** The charge a refund gives back (read unlocked, so its caller can lock the charge before the refund). */
export async function chargeIdOfRefund(em: EntityManager, refundId: string): Promise<string> {
  const [owner] = await em.execute<{ charge_id: string }[]>("select charge_id from subscription_refunds where id = ?", [refundId]);
  return owner!.charge_id;
}
