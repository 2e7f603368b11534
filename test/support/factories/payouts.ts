import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

export interface PayoutTraits {
  /** The destination paid to; the payout is its merchant's, in its asset, network and address. */
  destinationId: string;
  /** PENDING (the default): debited, not yet on the chain. PAID: on the chain too (tx hash `forged-…`). Both now. */
  status?: "PENDING" | "PAID";
  amount?: string | number;
  fee?: string | number;
  id?: string;
}

/**
 * A payout row as the payouts service would leave it, with no ledger
 * transaction behind it (what reconciliation tests forge).
 */
export async function payout(db: Db, traits: PayoutTraits): Promise<{ id: string }> {
  const { status = "PENDING" } = traits;
  const id = traits.id ?? randomUUID();
  const [row] = await db.sql<{ id: string }>(
    `insert into payouts (id, merchant_id, destination_id, asset, network, address, amount, fee, status, tx_hash, metadata, debited_at, paid_at, created_at, updated_at)
     select ?, d.merchant_id, d.id, d.asset, d.network, d.address, ?::numeric, ?::numeric, ?, ?, '{}', now(), ${status === "PAID" ? "now()" : "null"}, now(), now()
     from payout_destinations d where d.id = ?
     returning id`,
    [id, String(traits.amount ?? 1), String(traits.fee ?? 0), status, status === "PAID" ? `forged-${id}` : null, traits.destinationId],
  );
  if (!row) throw new Error(`no payout destination ${traits.destinationId}`);
  return { id };
}
