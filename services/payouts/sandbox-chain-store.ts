import type { EntityManager } from "@mikro-orm/postgresql";

/** The sandbox's fake chain (payout_sandbox_chain): one row per payout id, whatever the retries. */
export interface SandboxTransferRow {
  tx_hash: string;
  submitted_at: Date;
  confirmations_needed: number;
  block_seconds: number;
  failed_reason: string | null;
}

/** Accepts the transfer, or counts one more submission of the one already there (a retry names the same transfer). */
export async function submitSandboxTransfer(
  em: EntityManager,
  t: { payoutId: string; network: string; address: string; amount: string; txHash: string; requiredConfirmations: number; blockSeconds: number },
  now: Date,
): Promise<SandboxTransferRow> {
  const [row] = await em.execute<SandboxTransferRow[]>(
    `insert into payout_sandbox_chain (payout_id, network, address, amount, tx_hash, confirmations_needed, block_seconds, submitted_at)
         values (?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (payout_id) do update set submissions = payout_sandbox_chain.submissions + 1
         returning tx_hash, submitted_at, confirmations_needed, block_seconds, failed_reason`,
    [t.payoutId, t.network, t.address, t.amount, t.txHash, t.requiredConfirmations, t.blockSeconds, now],
  );
  return row!;
}

export async function sandboxTransferOf(em: EntityManager, payoutId: string): Promise<SandboxTransferRow | undefined> {
  const [row] = await em.execute<SandboxTransferRow[]>(
    "select tx_hash, submitted_at, confirmations_needed, block_seconds, failed_reason from payout_sandbox_chain where payout_id = ?",
    [payoutId],
  );
  return row;
}

/** The sandbox control: the chain reports the payout's transfer failed, for this reason. */
export async function failSandboxTransfer(em: EntityManager, payoutId: string, reason: string): Promise<void> {
  await em.execute("update payout_sandbox_chain set failed_reason = ? where payout_id = ?", [reason, payoutId]);
}
