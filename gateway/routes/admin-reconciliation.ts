import { defineRoutes } from "../route.ts";
import { reconciliationSchema } from "../schemas/reconciliation.ts";

export const adminReconciliationRoutes = defineRoutes([
  {
    method: "get",
    path: "/admin/v1/reconciliation",
    operationId: "adminReconcile",
    summary: "Reconcile money with its owners: every wallet transaction of a subscription charge or order credit against its row",
    description:
      "Runs a reconciliation now. Each mismatch (money without a SUCCEEDED owner, a SUCCEEDED owner without money, amounts that differ, a parked row) " +
      "is listed with ids; it is recorded once as an anomaly row and logged at error level when first seen. A clean run answers " +
      '{"status":"ok","checked":N,"anomalies":[]}.',
    tag: "Operator",
    auth: "admin",
    responses: { 200: { description: "The reconciliation result", schema: reconciliationSchema } },
    async handler(_input, { clients }) {
      const res = await clients.wallet.reconcile({});
      return {
        status: 200,
        body: {
          status: res.status,
          checked: Number(res.checked),
          anomalies: res.anomalies.map((a) => ({
            kind: a.kind,
            ownerType: a.ownerType,
            ownerId: a.ownerId,
            walletTransactionId: a.walletTransactionId ?? null,
            details: JSON.parse(a.detailsJson) as Record<string, unknown>,
          })),
        },
      };
    },
  },
]);
