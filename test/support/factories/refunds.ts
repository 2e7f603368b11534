import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

export interface RefundTraits {
  chargeId: string;
  /** PENDING (the default), SUCCEEDED (naming a wallet transaction) or FAILED (MERCHANT_BALANCE_INSUFFICIENT); the settled ones settled now. */
  status?: "PENDING" | "SUCCEEDED" | "FAILED";
  /** In USD, refunded 1:1 in USDT_TRON. */
  amount?: string | number;
  /** The wallet transaction a SUCCEEDED refund names; by default one that does not exist. */
  walletTransactionId?: string;
  /** The lease runs out this many seconds from now (negative: it already has); none by default. */
  leaseSeconds?: number;
  leaseGeneration?: number;
  /** An automatic refund (money the service owes back). */
  owed?: boolean;
  reason?: string;
  id?: string;
}

/** A refund of a charge, to the charge's customer, from the charge's merchant. */
export async function refund(db: Db, traits: RefundTraits): Promise<{ id: string }> {
  const { chargeId, status = "PENDING", amount = 1 } = traits;
  const [row] = await db.sql<{ id: string }>(
    `insert into subscription_refunds (id, merchant_id, charge_id, subscription_id, wallet_user_id, amount, currency, asset, asset_amount, status,
       failure_reason, wallet_transaction_id, reason, metadata, created_at, settled_at, lease_until, lease_generation, owed)
     select ?, c.merchant_id, c.id, c.subscription_id, c.wallet_user_id, ?::numeric, 'USD', 'USDT_TRON', ?::numeric, ?,
       ?, ?, ?, '{}', now(), ${status === "PENDING" ? "null" : "now()"}, now() + make_interval(secs => ?), ?, ?
     from subscription_charges c where c.id = ?
     returning id`,
    [
      traits.id ?? randomUUID(),
      String(amount),
      String(amount),
      status,
      status === "FAILED" ? "MERCHANT_BALANCE_INSUFFICIENT" : null,
      status === "SUCCEEDED" ? (traits.walletTransactionId ?? randomUUID()) : null,
      traits.reason ?? null,
      traits.leaseSeconds ?? null,
      traits.leaseGeneration ?? 0,
      traits.owed ?? false,
      chargeId,
    ],
  );
  if (!row) throw new Error(`no charge ${chargeId} to refund`);
  return { id: row.id };
}
