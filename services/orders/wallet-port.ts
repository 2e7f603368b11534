import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { RpcClients } from "../platform/rpc/clients.ts";
import type { Config } from "../platform/config.ts";
import { DomainError } from "../platform/errors.ts";
import { errorCodeOf } from "../platform/rpc/error-code.ts";
import { WALLET_CALL_TIMEOUT_MS } from "../platform/wallet-calls/wallet-call.ts";

export interface RegistryAsset {
  code: string;
  network: string;
  decimals: number;
  currency: string;
  requiredConfirmations: number;
}

interface Quote {
  assetAmount: string;
  rate: string;
  rateAt: Date;
}

/**
 * What the orders domain needs from the wallet service, and nothing more:
 * the asset registry, quotes, and merchant credits. It never reads the
 * wallet's tables. Wallet refusals of our input keep their code (400);
 * anything else is "the wallet is unavailable" (503), never a 500.
 */
export interface WalletPort {
  listAssets(): Promise<RegistryAsset[]>;
  quote(input: { amount: string; currency: string; asset: string }): Promise<Quote>;
  creditMerchant(input: { idempotencyKey: string; merchantId: string; asset: string; amount: string; description: string }): Promise<{ transactionId: string }>;
}

/** How long the asset registry is reused: it changes only with a deploy of the wallet. */
const REGISTRY_TTL_MS = 60_000;

/**
 * The Connect-backed port. The wallet URL is read at call time: in a
 * single-process deployment it is known only once the services port is bound.
 */
export function walletPort(deps: { rpc: RpcClients; config: Config }): WalletPort {
  let client: { url: string; client: Client<typeof WalletService> } | undefined;
  const wallet = () => {
    const url = deps.config.serviceUrls.wallet;
    if (client?.url !== url) client = { url, client: deps.rpc.client(WalletService, url) };
    return client.client;
  };
  let registry: { at: number; assets: Promise<RegistryAsset[]> } | undefined;
  return {
    listAssets() {
      // Monotonic time: a cache lifetime, not business time.
      const now = performance.now();
      if (!registry || now - registry.at > REGISTRY_TTL_MS) {
        const assets = call(() => wallet().listAssets({})).then((res) =>
          res.assets.map((a) => ({
            code: a.code,
            network: a.network,
            decimals: a.decimals,
            currency: a.currency,
            requiredConfirmations: a.requiredConfirmations,
          })),
        );
        registry = { at: now, assets };
        assets.catch(() => (registry = undefined));
      }
      return registry.assets;
    },
    async quote(input) {
      const res = await call(() => wallet().quote({ ...input, rounding: "up" }));
      if (!res.rateAt) throw new DomainError("unavailable", "WALLET_UNAVAILABLE", "the wallet answered a quote without its time");
      return { assetAmount: res.assetAmount, rate: res.rate, rateAt: timestampDate(res.rateAt) };
    },
    async creditMerchant(input) {
      const res = await call(() => wallet().creditMerchant(input, { timeoutMs: WALLET_CALL_TIMEOUT_MS }));
      return { transactionId: res.transactionId };
    },
  };
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.InvalidArgument) {
      throw new DomainError("invalid", errorCodeOf(err) ?? "INVALID_REQUEST", err.rawMessage, { cause: err });
    }
    throw new DomainError("unavailable", "WALLET_UNAVAILABLE", "the wallet service is unavailable; retry later", { cause: err });
  }
}
