import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { apiClient } from "../support/http.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { eventually } from "../support/eventually.ts";
import { createOrder } from "../services/orders/orders-client.ts";

describe("POST /admin/v1/deposits and the merchant walk-through (deposit → status → webhook)", () => {
  let receiver: WebhookReceiver;
  let merchant: { id: string; api: ApiClient };

  const sys = useTestSystem({ workerGroups: ["payments", "webhooks"] });
  before(async () => {
    receiver = await startWebhookReceiver();
    merchant = await sys.createMerchant("Walkthrough shop");
  });
  after(async () => {
    await receiver?.close();
  });

  it("walk-through: create an order, simulate the deposit, poll the status, receive the signed payment_order.paid webhook", async () => {
    const endpoint = await merchant.api.post("/api/v1/webhook-endpoints", {
      url: `${receiver.url}/orders`,
      enabledEvents: ["payment_order.paid", "payment_order.confirming"],
    });
    expect(endpoint.status, endpoint.text).to.equal(201);
    const order = await createOrder(merchant.api, { externalId: "walkthrough-1", asset: "USDT_TRON", amount: "25", currency: "USD" });
    expect(order.amountToPay).to.equal("25.000000");

    const seen = await sys.admin.post("/admin/v1/deposits", { address: order.address, asset: "USDT_TRON", amount: order.amountToPay, txId: "walk-tx-1" });
    expect(seen.status, seen.text).to.equal(201);
    expect(seen.body.outcome).to.equal("RECORDED");
    expect(seen.body.order).to.include({ status: "CONFIRMING", amountPaid: "25.000000" });
    expect(seen.body.order.payments).to.deep.include({ ...seen.body.order.payments[0], txId: "walk-tx-1", confirmations: 0, late: false });
    const confirmed = await sys.admin.post("/admin/v1/deposits", {
      address: order.address,
      asset: "USDT_TRON",
      amount: "25",
      txId: "walk-tx-1",
      confirmations: 19,
    });
    expect(confirmed.status).to.equal(200);
    expect(confirmed.body.outcome).to.equal("UPDATED");

    const status = await eventually(
      async () => {
        const res = await merchant.api.get(`/api/v1/payment-orders/${order.id}/status`);
        return res.body.status === "PAID" ? res.body : undefined;
      },
      10_000,
      "status PAID",
    );
    expect(status).to.include({ id: order.id, externalId: "walkthrough-1", amountToPay: "25.000000", amountPaid: "25.000000" });

    const hooks = await receiver.waitFor((r) => r.some((h) => h.body.includes('"payment_order.paid"')));
    const hook = hooks.find((h) => h.body.includes('"payment_order.paid"'))!;
    const payload = new Webhook(endpoint.body.secret).verify(hook.body, {
      "webhook-id": String(hook.headers["webhook-id"]),
      "webhook-timestamp": String(hook.headers["webhook-timestamp"]),
      "webhook-signature": String(hook.headers["webhook-signature"]),
    }) as { type: string; data: Record<string, any> };
    expect(payload.type).to.equal("payment_order.paid");
    expect(payload.data).to.include({ id: order.id, object: "payment_order", externalId: "walkthrough-1", status: "PAID", amountPaid: "25.000000" });
    expect(payload.data.payments.map((p: { txId: string }) => p.txId)).to.deep.equal(["walk-tx-1"]);
    expect(
      receiver.received
        .filter((h) => h.body.includes(order.id))
        .map((h) => JSON.parse(h.body).type)
        .sort(),
    ).to.deep.equal(["payment_order.confirming", "payment_order.paid"]);

    // Settled once, through the balanced ledger: a repeated report credits nothing more.
    await eventually(async () => (await merchant.api.get(`/api/v1/payment-orders/${order.id}`)).body.settledAt, 10_000, "settledAt");
    const again = await sys.admin.post("/admin/v1/deposits", {
      address: order.address,
      asset: "USDT_TRON",
      amount: "25",
      txId: "walk-tx-1",
      confirmations: 40,
    });
    expect(again.body.order).to.include({ status: "PAID", amountPaid: "25.000000" });
    const credits = await sys.sql<{ n: string; total: string }>("select count(*) as n, sum(amount) as total from payment_order_credits where order_id = ?", [
      order.id,
    ]);
    expect(Number(credits[0]!.n)).to.equal(1);
    expect(Number(credits[0]!.total)).to.equal(25);
    const check = await sys.admin.get("/admin/v1/ledger/check");
    expect(check.status).to.equal(200);
    expect(check.body).to.include({ ok: true });
    expect(check.body.problems).to.deep.equal([]);
  });

  it("reports a duplicate txId as DUPLICATE and counts it once", async () => {
    const order = await createOrder(merchant.api, { asset: "BTC", amount: "0.01" });
    const body = { address: order.address, asset: "BTC", amount: "0.004", txId: "dup-tx", confirmations: 1 };
    expect((await sys.admin.post("/admin/v1/deposits", body)).body.outcome).to.equal("RECORDED");
    const again = await sys.admin.post("/admin/v1/deposits", body);
    expect(again.status).to.equal(200);
    expect(again.body.outcome).to.equal("DUPLICATE");
    expect(again.body.order).to.include({ status: "UNDERPAID", amountPaid: "0.00400000" });
  });

  it("answers 404, 400 and 409 with the error body naming the field", async () => {
    const order = await createOrder(merchant.api, { asset: "ETH", amount: "1" });
    const post = (body: Record<string, unknown>) =>
      sys.admin.post("/admin/v1/deposits", { address: order.address, asset: "ETH", amount: "0.1", txId: "edge-tx", ...body });
    const unknown = await post({ address: "0x0000000000000000000000000000000000000000" });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.equal("DEPOSIT_ADDRESS_NOT_FOUND");
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ txId: undefined }, /txId: is required/],
      [{ amount: "0.1.2" }, /amount: must match the pattern/],
      [{ amount: "0" }, /amount: must be greater than 0/],
      [{ confirmations: -1 }, /confirmations: must be >= 0/],
      [{ asset: "XRP" }, /asset: must be one of/],
      [{ asset: "BTC" }, /asset: address .* receives ETH, not BTC/],
      [{ fee: "1" }, /fee: is not a known field/],
    ];
    for (const [change, message] of cases) {
      const body = Object.fromEntries(
        Object.entries({ address: order.address, asset: "ETH", amount: "0.1", txId: "edge-tx", ...change }).filter(([, v]) => v !== undefined),
      );
      const res = await sys.admin.post("/admin/v1/deposits", body);
      expect(res.status, JSON.stringify(change)).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    expect((await post({})).status).to.equal(201);
    const conflict = await post({ amount: "0.2" });
    expect(conflict.status).to.equal(409);
    expect(conflict.body.error).to.equal("DEPOSIT_CONFLICT");
  });

  it("matches an address however the chain watcher spells its case: lower-case EVM (no EIP-55 checksum), upper-case bech32", async () => {
    const eth = await createOrder(merchant.api, { asset: "USDC_ETH", amount: "5" });
    expect(eth.address).to.not.equal(eth.address.toLowerCase());
    const lower = await sys.admin.post("/admin/v1/deposits", {
      address: eth.address.toLowerCase(),
      asset: "USDC_ETH",
      amount: "5",
      txId: "case-tx-1",
      confirmations: 12,
    });
    expect(lower.status, lower.text).to.equal(201);
    expect(lower.body.order).to.include({ id: eth.id, address: eth.address, status: "PAID", amountPaid: "5.000000" });
    const upper = await sys.admin.post("/admin/v1/deposits", {
      address: eth.address.toUpperCase().replace(/^0X/, "0x"),
      asset: "USDC_ETH",
      amount: "5",
      txId: "case-tx-1",
      confirmations: 13,
    });
    expect(upper.body.outcome).to.equal("UPDATED");

    const btc = await createOrder(merchant.api, { asset: "BTC", amount: "0.01" });
    const shouted = await sys.admin.post("/admin/v1/deposits", {
      address: btc.address.toUpperCase(),
      asset: "BTC",
      amount: "0.01",
      txId: "case-tx-2",
      confirmations: 2,
    });
    expect(shouted.status, shouted.text).to.equal(201);
    expect(shouted.body.order).to.include({ id: btc.id, status: "PAID" });
    // TRON's base58 is case-sensitive: another case is another (unknown) address.
    const tron = await createOrder(merchant.api);
    const swapped = tron.address.replace(/[a-z]/, (ch: string) => ch.toUpperCase());
    expect((await sys.admin.post("/admin/v1/deposits", { address: swapped, asset: "USDT_TRON", amount: "10", txId: "case-tx-3" })).status).to.equal(404);
  });

  it("refuses, as 400 naming amount and never 500, a transfer that would take the order's totals past what amounts can hold", async () => {
    // A merchant of its own: its balance takes the whole first transfer.
    const rich = await sys.createMerchant("Huge amounts");
    const order = await createOrder(rich.api, { amount: "99999999999999999999" });
    const huge = { address: order.address, asset: "USDT_TRON", amount: "99999999999999999999", confirmations: 19 };
    expect((await sys.admin.post("/admin/v1/deposits", { ...huge, txId: "huge-1" })).status).to.equal(201);
    const over = await sys.admin.post("/admin/v1/deposits", { ...huge, txId: "huge-2" });
    expect(over.status, over.text).to.equal(400);
    expect(over.body.error).to.equal("INVALID_REQUEST");
    expect(over.body.message).to.match(/^amount: /);
    const after = await rich.api.get(`/api/v1/payment-orders/${order.id}`);
    expect(after.body.payments).to.have.length(1);
  });

  it("is an operator route: 401 without the admin key, and merchants' API keys do not open it", async () => {
    const order = await createOrder(merchant.api);
    const body = { address: order.address, asset: "USDT_TRON", amount: "10", txId: "auth-tx", confirmations: 19 };
    expect((await sys.http.post("/admin/v1/deposits", body)).status).to.equal(401);
    expect((await merchant.api.post("/admin/v1/deposits", body)).status).to.equal(401);
    expect((await apiClient(sys.baseUrl, { "x-admin-key": "wrong-key-0123456789" }).post("/admin/v1/deposits", body)).status).to.equal(401);
    expect((await merchant.api.get(`/api/v1/payment-orders/${order.id}/status`)).body.status).to.equal("PENDING");
  });
});
