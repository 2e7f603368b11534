import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { eventually } from "../../support/eventually.ts";
import { createOrder, orderClients } from "./orders-client.ts";

/**
 * Record versions of payment orders (platform/record-version.ts): each change
 * raises the version by one in the commit that records its event; the
 * record, the status body and every payment_order.* event carry it.
 */
describe("record versions: payment orders", () => {
  let clients: ReturnType<typeof orderClients>;
  let api: ApiClient;

  const sys = useTestSystem({ workerGroups: ["payments"] });
  before(async () => {
    clients = orderClients(sys);
    api = (await sys.createMerchant("Versions shop")).api;
  });
  after(async () => {
    clients?.close();
  });

  /** [event type, version in its data] of an order, in commit order. */
  const versions = async (orderId: string) =>
    (await sys.sql<{ type: string; data: any }>("select type, data from events where data->>'id' = ? order by seq", [orderId])).map((r) => [
      r.type,
      r.data.version,
    ]);
  const report = (order: { address: string }, confirmations: number) =>
    clients.orders.reportDeposit({ address: order.address, asset: "USDT_TRON", amount: "10", txId: "version-tx", confirmations });

  it("1 created → 2 confirming → 3 paid → 4 settled; a duplicate report changes nothing; GET and the status body show the latest", async () => {
    const order = await createOrder(api, { asset: "USDT_TRON", amount: "10" });
    expect(order.version).to.equal(1);
    await report(order, 0);
    await report(order, 0); // DUPLICATE: no change
    await report(order, 19);

    const settled = await eventually(
      async () => {
        const body = (await api.get(`/api/v1/payment-orders/${order.id}`)).body;
        return body.settledAt ? body : undefined;
      },
      10_000,
      "settledAt",
    );
    // Crediting the merchant stamps settledAt in a set-based update: a change without an event of its own.
    expect(settled).to.include({ status: "PAID", version: 4 });
    expect(await versions(order.id)).to.deep.equal([
      ["payment_order.created", 1],
      ["payment_order.confirming", 2],
      ["payment_order.paid", 3],
    ]);
    expect((await api.get(`/api/v1/payment-orders/${order.id}/status`)).body).to.include({ status: "PAID", version: 4 });
    const listed = (await api.get(`/api/v1/payment-orders?limit=100`)).body.data.find((o: any) => o.id === order.id);
    expect(listed.version).to.equal(4);
  });

  it("expiry by the sweep raises the version by one, in the record and in payment_order.expired", async () => {
    const order = await createOrder(api, { expiresInMinutes: 5 });
    const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 5 * 60 + 1 });
    expect(res.status).to.equal(200);
    const expired = await eventually(
      async () => {
        const body = (await api.get(`/api/v1/payment-orders/${order.id}`)).body;
        return body.status === "EXPIRED" ? body : undefined;
      },
      10_000,
      "expired",
    );
    expect(expired.version).to.equal(2);
    expect(await versions(order.id)).to.deep.equal([
      ["payment_order.created", 1],
      ["payment_order.expired", 2],
    ]);
  });
});
