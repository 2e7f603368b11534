import { Code, ConnectError } from "@connectrpc/connect";
import { MerchantService } from "../../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { OrdersService } from "../../proto/gen/billing/orders/v1/orders_pb.ts";
import { add, amount, formatAmount, zero } from "../platform/money.ts";
import { recordOf } from "../platform/rpc/record-json.ts";
import { claimLinks } from "./order-refunds/claim-token.ts";
import { RefundOutcome, WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { Config } from "../platform/config.ts";
import { DomainError } from "../platform/errors.ts";
import type { Logger } from "../platform/logger.ts";
import type { RpcClients } from "../platform/rpc/clients.ts";
import { errorCodeOf } from "../platform/rpc/error-code.ts";
import { WALLET_CALL_TIMEOUT_MS } from "../platform/wallet-calls/wallet-call.ts";
import { parseExtendedPublicKey } from "../orders/addresses/extended-public-key.ts";
import type { Chain } from "./addresses/payout-address.ts";
import type { ChainPort, PayoutAsset, PayoutPorts } from "./payout-ports.ts";
import { sandboxChain } from "./sandbox-chain.ts";
import { signerChain } from "./signer-chain.ts";

/** How long the asset registry is reused: it changes only with a deploy of the wallet. */
const REGISTRY_TTL_MS = 60_000;

/**
 * The chain payouts go to: the sandbox's fake chain in sandbox mode, the
 * custody signer when PAYOUT_SIGNER_URL is set, else none (payouts answer
 * 503 PAYOUTS_UNAVAILABLE; never a silent success).
 */
function chainFor(config: Config): ChainPort | null {
  if (config.sandbox) return sandboxChain();
  if (config.payoutSignerUrl) return signerChain({ url: config.payoutSignerUrl, token: config.payoutSignerToken });
  return null;
}

/** Bitcoin payout addresses follow the deposit key's chain: testnet only when XPUB_BTC is a testnet key. */
function addressChainFor(config: Config): Chain {
  try {
    return config.depositXpubs.BITCOIN && parseExtendedPublicKey(config.depositXpubs.BITCOIN).testnet ? "testnet" : "mainnet";
  } catch {
    return "mainnet";
  }
}

/** One set of ports per process (per RPC clients and config), so the registry cache is shared by the service and its jobs. */
const portsByRpc = new WeakMap<RpcClients, { config: Config; ports: PayoutPorts }>();

export function processPayoutPorts(deps: { rpc: RpcClients; config: Config; logger: Logger }): PayoutPorts {
  const cached = portsByRpc.get(deps.rpc);
  if (cached && cached.config === deps.config) return cached.ports;
  const ports = payoutPorts(deps);
  portsByRpc.set(deps.rpc, { config: deps.config, ports });
  return ports;
}

/** Service URLs are read at call time: in one process the services' port is known only after they listen. */
export function payoutPorts(deps: { rpc: RpcClients; config: Config; logger: Logger }, chain: ChainPort | null = chainFor(deps.config)): PayoutPorts {
  const wallet = () => deps.rpc.client(WalletService, deps.config.serviceUrls.wallet);
  const merchants = () => deps.rpc.client(MerchantService, deps.config.serviceUrls.merchants);
  const orders = () => deps.rpc.client(OrdersService, deps.config.serviceUrls.orders);
  let registry: { at: number; assets: Promise<PayoutAsset[]> } | undefined;
  return {
    chain,
    addressChain: addressChainFor(deps.config),
    cooldownMinutes: deps.config.payoutDestinationCooldownMinutes,
    logger: deps.logger,
    claimLinks: claimLinks(deps.config.secretsKey, deps.config.publicBaseUrl),
    orders: {
      async refundable(merchantId, orderId) {
        let res;
        try {
          res = await orders().getPaymentOrder({ merchantId, id: orderId });
        } catch (err) {
          if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
          return call(() => Promise.reject(err));
        }
        const order = recordOf(res.order) as {
          id: string;
          asset: string;
          requiredConfirmations: number;
          payments: { amount: string; confirmations: number }[];
        };
        const confirmed = order.payments.filter((p) => p.confirmations >= order.requiredConfirmations).reduce((sum, p) => add(sum, amount(p.amount)), zero());
        return { id: order.id, asset: order.asset, confirmed: formatAmount(confirmed) };
      },
    },
    async merchantName(merchantId) {
      const { merchant } = await call(() => merchants().getMerchant({ id: merchantId }));
      return merchant?.name ?? "The merchant";
    },
    async reviewAbove(merchantId) {
      const { merchant } = await call(() => merchants().getMerchant({ id: merchantId }));
      return merchant?.payoutReviewAbove ?? null;
    },
    wallet: {
      listAssets() {
        // Monotonic time: a cache lifetime, not business time.
        const now = performance.now();
        if (!registry || now - registry.at > REGISTRY_TTL_MS) {
          const assets = call(() => wallet().listAssets({})).then((res) =>
            res.assets.map((a) => ({
              code: a.code,
              network: a.network,
              decimals: a.decimals,
              requiredConfirmations: a.requiredConfirmations,
              blockSeconds: a.blockSeconds,
              payoutFee: a.payoutFee,
              payoutMinimum: a.payoutMinimum,
            })),
          );
          registry = { at: now, assets };
          assets.catch(() => (registry = undefined));
        }
        return registry.assets;
      },
      async quoteDown(input) {
        return (await call(() => wallet().quote({ ...input, rounding: "down" }))).assetAmount;
      },
      async debit(input) {
        const res = await wallet().debitForPayout(input, { timeoutMs: WALLET_CALL_TIMEOUT_MS });
        if (res.outcome !== RefundOutcome.SUCCEEDED && res.outcome !== RefundOutcome.MERCHANT_BALANCE_INSUFFICIENT)
          throw new Error(`wallet answered a payout debit with unknown outcome ${res.outcome}`);
        return {
          outcome: res.outcome === RefundOutcome.SUCCEEDED ? "SUCCEEDED" : "MERCHANT_BALANCE_INSUFFICIENT",
          transactionId: res.transactionId ?? null,
          merchantBalanceAfter: res.merchantBalanceAfter,
        };
      },
      async reverse(input) {
        const res = await wallet().reversePayout(input, { timeoutMs: WALLET_CALL_TIMEOUT_MS });
        return { transactionId: res.transactionId };
      },
    },
  };
}

/** Wallet/merchants refusals of our input keep their code (400); anything else is "unavailable" (503), never a 500. */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.InvalidArgument) {
      throw new DomainError("invalid", errorCodeOf(err) ?? "INVALID_REQUEST", err.rawMessage, { cause: err });
    }
    throw new DomainError("unavailable", "SERVICE_UNAVAILABLE", "a service payouts depend on is unavailable; retry later", { cause: err });
  }
}
