import { WALLET_CALL_TIMEOUT_MS } from "../platform/wallet-calls/wallet-call.ts";
import type { ChainPort, ChainStatus, ChainTransfer } from "./payout-ports.ts";

const STATES = ["SUBMITTED", "CONFIRMED", "FAILED"] as const;

/**
 * The custody signer, over HTTP (the interface is in docs/payments.md, "Payouts:
 * the custody signer interface"):
 *   POST {url}/v1/payouts  Idempotency-Key: <payout id>
 *        {"payoutId","network","asset","address","amount","requiredConfirmations"}
 *        → 200/201 {"payoutId","status":"SUBMITTED"|"CONFIRMED"|"FAILED","txHash","confirmations","failureReason"}
 *        the same payout id again answers the first transfer and signs nothing;
 *   GET  {url}/v1/payouts/{payoutId} → 200 (the same body) or 404 (never heard of it).
 * With a token, every request carries `Authorization: Bearer <token>`.
 * Anything else (a timeout, a 5xx, a body that is not this) throws: the
 * wallet-call protocol counts the failure, backs off and retries the same id.
 */
export function signerChain(options: { url: string; token?: string | undefined; timeoutMs?: number; fetch?: typeof fetch }): ChainPort {
  const doFetch = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, "");
  const headers = (extra: Record<string, string> = {}) => ({
    accept: "application/json",
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    ...extra,
  });
  const request = async (path: string, init: RequestInit): Promise<ChainStatus | undefined> => {
    const res = await doFetch(`${base}${path}`, {
      ...init,
      signal: AbortSignal.timeout(
        options.timeoutMs ?? WALLET_CALL_TIMEOUT_MS /* the wallet-call timeout: shorter than the lease, so one key is never in two calls */,
      ),
      redirect: "error",
    });
    const text = await res.text();
    if (res.status === 404 && init.method === "GET") return undefined;
    if (res.status !== 200 && res.status !== 201) throw new Error(`payout signer answered ${res.status} for ${path}: ${text.slice(0, 200)}`);
    return parseStatus(text);
  };
  return {
    name: "signer",
    async submit(_ctx, t: ChainTransfer) {
      const body = JSON.stringify({
        payoutId: t.payoutId,
        network: t.network,
        asset: t.asset,
        address: t.address,
        amount: t.amount,
        requiredConfirmations: t.requiredConfirmations,
      });
      const status = await request("/v1/payouts", {
        method: "POST",
        headers: headers({ "content-type": "application/json", "idempotency-key": t.payoutId }),
        body,
      });
      return status!;
    },
    async status(_ctx, t: ChainTransfer) {
      return request(`/v1/payouts/${encodeURIComponent(t.payoutId)}`, { method: "GET", headers: headers() });
    },
  };
}

function parseStatus(text: string): ChainStatus {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error("payout signer answered a body that is not JSON");
  }
  const state = body.status;
  if (typeof state !== "string" || !(STATES as readonly string[]).includes(state))
    throw new Error(`payout signer answered an unknown status ${JSON.stringify(state)}`);
  const txHash = typeof body.txHash === "string" && body.txHash !== "" ? body.txHash.slice(0, 100) : null;
  if (state !== "FAILED" && !txHash) throw new Error(`payout signer answered ${state} without a txHash`);
  const confirmations = typeof body.confirmations === "number" && Number.isInteger(body.confirmations) && body.confirmations >= 0 ? body.confirmations : 0;
  const failureReason = typeof body.failureReason === "string" ? body.failureReason.slice(0, 500) : null;
  return { state: state as ChainStatus["state"], txHash, confirmations, failureReason };
}
