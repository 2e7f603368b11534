import { expect } from "chai";
import type { TestSystem } from "./system.ts";
import type { ApiClient } from "./http.ts";
import { eventually } from "./eventually.ts";
import { createOrder } from "../services/orders/orders-client.ts";

let deposits = 0;
/** A USDT_TRON order of `amount` USD paid with `paid` (confirmed): the merchant's balance grows by `paid`. */
export async function paidOrder(sys: TestSystem, api: ApiClient, amount: string, paid = amount) {
  const before = await available(api);
  const order = await createOrder(api, { asset: "USDT_TRON", amount, currency: "USD" });
  const res = await sys.admin.post("/admin/v1/deposits", {
    address: order.address,
    asset: "USDT_TRON",
    amount: paid,
    txId: `order-refund-${process.pid}-${++deposits}`,
    confirmations: 19,
  });
  expect(res.status, res.text).to.be.oneOf([200, 201]);
  await eventually(async () => ((await available(api)) !== before ? true : undefined), 15_000, "the order's credit");
  return (await api.get(`/api/v1/payment-orders/${order.id}`)).body;
}

export async function available(api: ApiClient): Promise<string> {
  const res = await api.get("/api/v1/balance");
  return res.body.available.find((b: any) => b.asset === "USDT_TRON")?.amount ?? "0";
}
