import { defineRoutes } from "../route.ts";
import { depositResultSchema, reportDepositBody } from "../schemas/payment-orders.ts";
import { DepositOutcomeSchema } from "../../proto/gen/billing/orders/v1/orders_pb.ts";
import { enumName } from "../../services/platform/rpc/proto-enums.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

/**
 * The chain-watcher contract over REST, for operators and the sandbox: a
 * transfer seen on chain to an order's deposit address. The same txId again
 * is counted once; more confirmations update it.
 */
export const adminDepositRoutes = defineRoutes([
  {
    method: "post",
    path: "/admin/v1/deposits",
    operationId: "adminReportDeposit",
    summary: "Report a transfer to a payment order's deposit address (chain watcher / sandbox)",
    description:
      "404 DEPOSIT_ADDRESS_NOT_FOUND when no order has the address; 400 DEPOSIT_ASSET_MISMATCH when the address belongs to an order in another asset; " +
      "409 DEPOSIT_CONFLICT when the txId was reported before with another amount.",
    tag: "Operator",
    auth: "admin",
    body: reportDepositBody,
    errors: [404, 409],
    responses: {
      201: { description: "A new transfer was recorded (outcome RECORDED), with the order after it", schema: depositResultSchema },
      200: { description: "A known transfer: more confirmations (UPDATED) or nothing new (DUPLICATE)", schema: depositResultSchema },
    },
    async handler({ body }, { clients }) {
      const res = await clients.orders.reportDeposit({
        address: body.address,
        asset: body.asset,
        amount: body.amount,
        txId: body.txId,
        confirmations: body.confirmations,
      });
      const outcome = enumName(DepositOutcomeSchema, res.outcome);
      return { status: outcome === "RECORDED" ? 201 : 200, body: { outcome, order: recordOf(res.order) } };
    },
  },
]);
