import type { Client } from "@connectrpc/connect";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { OrdersService } from "../../../proto/gen/billing/orders/v1/orders_pb.ts";
import { OwnerType, WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import type { TestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";

/** Real Connect clients to the test system's orders and wallet services. */
export function orderClients(sys: TestSystem): { orders: Client<typeof OrdersService>; wallet: Client<typeof WalletService>; rpc: RpcClients; close(): void } {
  const rpc = new RpcClients(sys.config.internalApiToken);
  return {
    orders: rpc.client(OrdersService, sys.config.serviceUrls.orders),
    wallet: rpc.client(WalletService, sys.config.serviceUrls.wallet),
    rpc,
    close: () => rpc.close(),
  };
}

let counter = 0;
/** A unique externalId per call: tests share nothing. */
export const externalId = (prefix = "order") => `${prefix}-${process.pid}-${Date.now()}-${++counter}`;

/** Creates an order over REST and insists on 201. */
export async function createOrder(api: ApiClient, body: Record<string, unknown> = {}) {
  const res = await api.post("/api/v1/payment-orders", {
    externalId: externalId(),
    externalCustomerId: "customer-1",
    asset: "USDT_TRON",
    amount: "10",
    expiresInMinutes: 1440,
    ...body,
  });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body;
}

/** The payment_order.* event types recorded for an order, in commit order. */
export async function orderEventTypes(sys: TestSystem, orderId: string): Promise<string[]> {
  const rows = await sys.sql<{ type: string }>("select type from events where data->>'id' = ? and type like 'payment_order.%' order by seq", [orderId]);
  return rows.map((r) => r.type);
}

/** The merchant's ledger balance of one asset, asked of the wallet service (never its tables). */
export async function merchantBalance(wallet: Client<typeof WalletService>, merchantId: string, asset: string): Promise<string> {
  const { accounts } = await wallet.listAccounts({ ownerType: OwnerType.MERCHANT, ownerId: merchantId });
  return accounts.find((a) => a.asset === asset)?.balance ?? "0";
}
