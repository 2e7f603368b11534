import type { EntityManager } from "@mikro-orm/postgresql";
import { executeBound } from "../platform/database/bound-values.ts";

/**
 * The charge attempts' audit trail (wallet_charge_attempts): every outcome of
 * a charge, refusals included, in one statement per call. Each row, in order:
 * [id, idempotency_key, wallet_user_id, merchant_id, asset, amount,
 * outcome, balance_after, transaction_id, created_at] (amounts as canonical
 * decimal strings).
 */
export async function recordChargeAttempts(em: EntityManager, attempts: unknown[][]): Promise<void> {
  await executeBound(
    em,
    `insert into wallet_charge_attempts (id, idempotency_key, wallet_user_id, merchant_id, asset, amount, outcome, balance_after, transaction_id, created_at)
         values ${attempts.map(() => "(?, ?, ?, ?, ?, ?::numeric, ?, ?::numeric, ?, ?)").join(", ")}`,
    attempts.flat(),
  );
}
