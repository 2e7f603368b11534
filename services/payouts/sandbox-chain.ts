import { createHash } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import type { ChainPort, ChainStatus, ChainTransfer } from "./payout-ports.ts";
import { sandboxTransferOf, submitSandboxTransfer, type SandboxTransferRow } from "./sandbox-chain-store.ts";

/**
 * A well-formed fake transaction hash for the network, derived from the
 * payout id (so every retry of a payout names the same transfer): 64 hex
 * digits for BITCOIN and TRON, 0x + 64 hex digits for ETHEREUM.
 */
export function fakeTxHash(network: string, payoutId: string): string {
  const hex = createHash("sha256").update(`sandbox-payout:${payoutId}`).digest("hex");
  return network === "ETHEREUM" ? `0x${hex}` : hex;
}

/**
 * The sandbox's chain: a transfer is accepted at once (one row per payout
 * id in payout_sandbox_chain, whatever the retries) and confirms one block
 * per `blockSeconds` of the service clock (the sandbox clock), so a payout is
 * PAID once the clock has passed its confirmations: BTC 2 × 10 min,
 * ETH/USDC_ETH 12 × 12 s, USDT_TRON 19 × 3 s. POST
 * /admin/v1/sandbox/payouts/{id}/fail marks a transfer failed.
 */
export function sandboxChain(): ChainPort {
  const statusOf = (row: SandboxTransferRow, now: Date): ChainStatus => {
    if (row.failed_reason) return { state: "FAILED", txHash: row.tx_hash, confirmations: 0, failureReason: row.failed_reason };
    const blocks = Math.max(0, Math.floor((now.getTime() - new Date(row.submitted_at).getTime()) / (Number(row.block_seconds) * 1000)));
    const needed = Number(row.confirmations_needed);
    return { state: blocks >= needed ? "CONFIRMED" : "SUBMITTED", txHash: row.tx_hash, confirmations: Math.min(blocks, needed), failureReason: null };
  };
  return {
    name: "sandbox",
    async submit(ctx: UseCaseContext, t: ChainTransfer) {
      const now = ctx.clock.now();
      const row = await submitSandboxTransfer(ctx.em.fork(), { ...t, txHash: fakeTxHash(t.network, t.payoutId) }, now);
      return statusOf(row, now);
    },
    async status(ctx: UseCaseContext, t: ChainTransfer) {
      const row = await sandboxTransferOf(ctx.em.fork(), t.payoutId);
      return row ? statusOf(row, ctx.clock.now()) : undefined;
    },
  };
}
