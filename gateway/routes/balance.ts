import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { OwnerType } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { defineRoutes } from "../route.ts";
import type { GatewayClients } from "../deps.ts";
import { pageSchema, toPageBody } from "../schemas/common.ts";
import { balanceObjectSchema, balanceTransactionSchema, listBalanceTransactionsQuery } from "../schemas/balance.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import { parseDateTime } from "../validation/date-time.ts";

export async function merchantBalance(clients: GatewayClients, merchantId: string) {
  const [{ accounts }, { pending }] = await Promise.all([
    clients.wallet.listAccounts({ ownerType: OwnerType.MERCHANT, ownerId: merchantId }),
    clients.payouts.getPendingBalance({ merchantId }),
  ]);
  // Registry order for both lists (listAccounts answers in it).
  const order = accounts.map((a) => a.asset);
  return {
    object: "balance",
    // Opened accounts only: an asset that never moved is not "held".
    available: accounts.filter((a) => a.id !== "").map((a) => ({ asset: a.asset, amount: a.balance })),
    pending: [...pending].sort((a, b) => order.indexOf(a.asset) - order.indexOf(b.asset)).map((p) => ({ asset: p.asset, amount: p.amount })),
  };
}

export const balanceRoutes = defineRoutes([
  {
    method: "get",
    path: "/api/v1/balance",
    operationId: "getBalance",
    summary: "Your balance per asset",
    description:
      "`available`: straight from your ledger accounts: what subscription charges and paid orders brought in, minus refunds and payouts. " +
      "`pending`: amount + fee of your payouts in flight (left `available`, not yet PAID, or on their way back after FAILED/CANCELLED).",
    tag: "Balance",
    auth: "apiKey",
    responses: { 200: { description: "The balance", schema: balanceObjectSchema } },
    async handler({ merchantId }, { clients }) {
      return { status: 200, body: await merchantBalance(clients, merchantId) };
    },
  },
  {
    method: "get",
    path: "/api/v1/balance-transactions",
    operationId: "listBalanceTransactions",
    summary: "Every movement of your balance, newest first",
    description: "Signed amounts (refunds negative) with the balance right after each; per asset they add up to your balance.",
    tag: "Balance",
    auth: "apiKey",
    query: listBalanceTransactionsQuery,
    responses: { 200: { description: "A page of balance transactions", schema: pageSchema(balanceTransactionSchema) } },
    async handler({ query, merchantId }, { clients }) {
      const res = await clients.wallet.listBalanceTransactions({
        merchantId,
        asset: query.asset,
        type: query.type,
        createdAfter: query.createdAfter ? timestampFromDate(parseDateTime("createdAfter", query.createdAfter)) : undefined,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { status: 200, body: toPageBody(res, res.transactions.map(recordOf)) };
    },
  },
  {
    method: "get",
    path: "/admin/v1/merchants/:id/balance",
    operationId: "adminGetMerchantBalance",
    summary: "A merchant's balance per asset",
    description: "The same figures as the merchant's GET /api/v1/balance. 404 MERCHANT_NOT_FOUND.",
    tag: "Operator",
    auth: "admin",
    errors: [404],
    responses: { 200: { description: "The balance", schema: balanceObjectSchema } },
    async handler({ params }, { clients }) {
      await clients.merchants.getMerchant({ id: params.id! });
      return { status: 200, body: await merchantBalance(clients, params.id!) };
    },
  },
]);
