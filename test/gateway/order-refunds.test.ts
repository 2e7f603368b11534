import { expect } from "chai";
import { compileBody } from "../../gateway/validation/ajv.ts";
import { orderRefundSchema } from "../../gateway/schemas/order-refunds.ts";
import { paymentOrderSchema } from "../../gateway/schemas/payment-orders.ts";
import { type TestSystem, useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { settle } from "../support/sweeps.ts";
import { createOrder } from "../services/orders/orders-client.ts";
import { available, paidOrder } from "../support/order-refunds.ts";

const TRON_ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const validRefund = compileBody(orderRefundSchema);
const validOrder = compileBody(paymentOrderSchema);

async function refundOf(api: ApiClient, orderId: string, id: string) {
  const res = await api.get(`/api/v1/payment-orders/${orderId}/refunds`);
  expect(res.status, res.text).to.equal(200);
  const found = res.body.data.find((r: any) => r.id === id);
  expect(validRefund(found), JSON.stringify(found)).to.equal(true);
  return found;
}

async function booksClean(sys: TestSystem) {
  const ledger = await sys.admin.get("/admin/v1/ledger/check");
  expect(ledger.body.ok, ledger.text).to.equal(true);
  const rec = await sys.admin.get("/admin/v1/reconciliation");
  expect(rec.body.status, rec.text).to.equal("ok");
}

describe("refunds of payment orders over the real stack (sandbox chain)", () => {
  let merchant: { id: string; api: ApiClient };
  let other: { id: string; api: ApiClient };

  const sys = useTestSystem();
  before(async () => {
    merchant = await sys.createMerchant("Refund shop");
    other = await sys.createMerchant("Other shop");
  });

  it("refunds an OVERPAID order's excess to an address at once: reserved (ORDER_REFUND), PROCESSING, then PAID; amountRefunded; events; books clean", async () => {
    const order = await paidOrder(sys, merchant.api, "100", "130");
    expect(order.status).to.equal("PAID");
    expect(order.overpaidAmount).to.equal("30.000000");
    expect(order.amountRefunded).to.equal("0.000000");
    const before = await available(merchant.api);

    const res = await merchant.api.post(
      `/api/v1/payment-orders/${order.id}/refunds`,
      { amount: order.overpaidAmount, address: TRON_ADDRESS },
      { "idempotency-key": "refund-excess-1" },
    );
    expect(res.status, res.text).to.equal(201);
    expect(validRefund(res.body), res.text).to.equal(true);
    expect(res.body).to.include({
      object: "order_refund",
      paymentOrderId: order.id,
      asset: "USDT_TRON",
      amount: "30",
      fee: "1",
      status: "PROCESSING",
      address: TRON_ADDRESS,
      claimUrl: null,
    });
    expect(res.body.payoutId).to.be.a("string");
    // amount + fee left the balance in one ORDER_REFUND movement
    expect(Number(before) - Number(await available(merchant.api))).to.equal(31);
    const moves = await merchant.api.get("/api/v1/balance-transactions?type=ORDER_REFUND");
    expect(moves.body.data.map((t: any) => [t.amount, t.sourceType, t.sourceId])).to.deep.equal([["-31", "order_refund", res.body.id]]);

    // the idempotent replay answers the same refund, nothing moves again
    const replay = await merchant.api.post(
      `/api/v1/payment-orders/${order.id}/refunds`,
      { amount: order.overpaidAmount, address: TRON_ADDRESS },
      { "idempotency-key": "refund-excess-1" },
    );
    expect(replay.status, replay.text).to.equal(201);
    expect(replay.body.id).to.equal(res.body.id);
    expect((await merchant.api.get("/api/v1/balance-transactions?type=ORDER_REFUND")).body.data).to.have.length(1);

    const payout = await eventually(
      async () => {
        const p = (await merchant.api.get(`/api/v1/payouts/${res.body.payoutId}`)).body;
        return p.status === "PROCESSING" ? p : undefined;
      },
      15_000,
      "the refund's payout PROCESSING",
    );
    expect(payout).to.include({ source: "ORDER_REFUND", amount: "30", fee: "1", address: TRON_ADDRESS });
    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 });
    // The workers' clocks re-read the sandbox offset within a second: sweep until the chain's confirmations are seen.
    await eventually(
      async () => {
        await settle(sys, { groups: ["payments"] });
        return (await refundOf(merchant.api, order.id, res.body.id)).status === "PAID" ? true : undefined;
      },
      15_000,
      "the refund PAID once its confirmations passed",
    );
    const after = (await merchant.api.get(`/api/v1/payment-orders/${order.id}`)).body;
    expect(validOrder(after), JSON.stringify(after)).to.equal(true);
    expect(after.amountRefunded).to.equal("30.000000");
    const events = await sys.sql<{ type: string }>("select type from events where data->>'id' = ? order by seq", [res.body.id]);
    expect(events.map((e) => e.type)).to.deep.equal(["payment_order.refund_created", "payment_order.refunded"]);
    await booksClean(sys);
  });

  it("answers every error: ORDER_NOT_REFUNDABLE, REFUND_EXCEEDS_PAYMENT, MERCHANT_BALANCE_INSUFFICIENT, 400 naming address or amount, 404 for unknown and another merchant's order", async () => {
    const unpaid = await createOrder(merchant.api, { asset: "USDT_TRON", amount: "10", currency: "USD" });
    const none = await merchant.api.post(`/api/v1/payment-orders/${unpaid.id}/refunds`, { address: TRON_ADDRESS });
    expect(none.status, none.text).to.equal(409);
    expect(none.body.error).to.equal("ORDER_NOT_REFUNDABLE");

    const order = await paidOrder(sys, merchant.api, "20");
    const more = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "20.5", address: TRON_ADDRESS });
    expect(more.status, more.text).to.equal(409);
    expect(more.body.error).to.equal("REFUND_EXCEEDS_PAYMENT");
    expect(more.body.message).to.contain("20 USDT_TRON");

    const wrong = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u" });
    expect(wrong.status, wrong.text).to.equal(400);
    expect(wrong.body.message).to.match(/^address: .*checksum/);
    const eth = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" });
    expect(eth.status, eth.text).to.equal(400);
    expect(eth.body.message).to.match(/^address: /);
    const decimals = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "5.0000001", address: TRON_ADDRESS });
    expect(decimals.status, decimals.text).to.equal(400);
    expect(decimals.body.message).to.match(/^amount: .*decimals/);
    const zero = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "0", address: TRON_ADDRESS });
    expect(zero.status, zero.text).to.equal(400);
    expect(zero.body.message).to.match(/amount/);
    const unknownField = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "5", to: TRON_ADDRESS });
    expect(unknownField.status).to.equal(400);

    const missing = await merchant.api.post(`/api/v1/payment-orders/00000000-0000-4000-8000-000000000000/refunds`, { address: TRON_ADDRESS });
    expect(missing.status, missing.text).to.equal(404);
    expect(missing.body.error).to.equal("PAYMENT_ORDER_NOT_FOUND");
    const theirs = await other.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { address: TRON_ADDRESS });
    expect(theirs.status, theirs.text).to.equal(404);
    expect(theirs.body.error).to.equal("PAYMENT_ORDER_NOT_FOUND");
    expect((await other.api.get(`/api/v1/payment-orders/${order.id}/refunds`)).status).to.equal(404);

    // The whole 20 + the 1 fee is more than a balance of exactly 20 of this merchant.
    const poor = await sys.createMerchant("Poor shop");
    const poorOrder = await paidOrder(sys, poor.api, "20");
    expect(await available(poor.api)).to.equal("20");
    const low = await poor.api.post(`/api/v1/payment-orders/${poorOrder.id}/refunds`, { address: TRON_ADDRESS }, { "idempotency-key": "poor-1" });
    expect(low.status, low.text).to.equal(409);
    expect(low.body.error).to.equal("MERCHANT_BALANCE_INSUFFICIENT");
    expect(await available(poor.api)).to.equal("20");
    expect((await poor.api.get(`/api/v1/payment-orders/${poorOrder.id}/refunds`)).body.data).to.deep.equal([]);
    expect((await poor.api.get(`/api/v1/payment-orders/${poorOrder.id}`)).body.amountRefunded).to.equal("0.000000");
    // part of it fits
    const part = await poor.api.post(`/api/v1/payment-orders/${poorOrder.id}/refunds`, { amount: "19", address: TRON_ADDRESS });
    expect(part.status, part.text).to.equal(201);
    expect(await available(poor.api)).to.equal("0");
    await booksClean(sys);
  });

  it("parallel refunds of one order never refund more than it brought in", async () => {
    const order = await paidOrder(sys, merchant.api, "50");
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "10", address: TRON_ADDRESS })),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created, answers.map((a) => a.text).join("\n")).to.have.length(5);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.error === "REFUND_EXCEEDS_PAYMENT")).to.equal(true);
    expect((await merchant.api.get(`/api/v1/payment-orders/${order.id}`)).body.amountRefunded).to.equal("50.000000");
  });

  it("without an address: AWAITING_ADDRESS with a claimUrl; an expired claim returns the money (the sweep finds it in Postgres)", async () => {
    const order = await paidOrder(sys, merchant.api, "40");
    const before = await available(merchant.api);
    const res = await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "10", expiresInMinutes: 5 });
    expect(res.status, res.text).to.equal(201);
    expect(validRefund(res.body), res.text).to.equal(true);
    expect(res.body).to.include({ status: "AWAITING_ADDRESS", address: null, payoutId: null });
    expect(res.body.claimUrl).to.match(/\/claims\/[A-Za-z0-9_-]{43}$/);
    expect(Number(before) - Number(await available(merchant.api))).to.equal(11);
    // the claim is not a payout the merchant can read yet, but the money shows as pending
    const bal = (await merchant.api.get("/api/v1/balance")).body;
    expect(bal.pending.find((p: any) => p.asset === "USDT_TRON")).to.exist;
    expect((await refundOf(merchant.api, order.id, res.body.id)).claimUrl).to.equal(res.body.claimUrl);

    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 301 });
    const expired = await eventually(
      async () => {
        await settle(sys, { groups: ["payments"] });
        const refund = await refundOf(merchant.api, order.id, res.body.id);
        return refund.status === "EXPIRED" ? refund : undefined;
      },
      15_000,
      "the claim EXPIRED once its time passed",
    );
    expect(expired).to.include({ status: "EXPIRED", claimUrl: null });
    expect(await available(merchant.api)).to.equal(before);
    const back = await merchant.api.get("/api/v1/balance-transactions?type=ORDER_REFUND");
    expect(back.body.data.filter((t: any) => t.sourceId === res.body.id).map((t: any) => t.amount)).to.deep.equal(["11", "-11"]);
    expect((await merchant.api.get(`/api/v1/payment-orders/${order.id}`)).body.amountRefunded).to.equal("0.000000");
    const page = await fetch(new URL(new URL(res.body.claimUrl).pathname, sys.baseUrl));
    expect(page.status).to.equal(410);
    const events = await sys.sql<{ type: string }>("select type from events where data->>'id' = ? order by seq", [res.body.id]);
    expect(events.map((e) => e.type)).to.deep.equal(["payment_order.refund_created", "payment_order.refund_expired"]);
    await booksClean(sys);
  });

  it("reconciliation reports an order refund's money without its row, a row without its money, and amounts that differ", async () => {
    const order = await paidOrder(sys, merchant.api, "30");
    const a = (await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "6", address: TRON_ADDRESS })).body;
    const b = (await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "7", address: TRON_ADDRESS })).body;
    await booksClean(sys);
    await sys.sql("update order_refunds set status = 'REFUSED' where id = ?", [a.id]);
    // the ledger is immutable: the row's id moves instead, so b's money has no row and the moved row no money
    const moved = "00000000-0000-4000-8000-0000000000b0";
    await sys.sql("update order_refunds set id = ? where id = ?", [moved, b.id]);
    const c = (await merchant.api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "5", address: TRON_ADDRESS })).body;
    await sys.sql("update order_refunds set amount = 4 where id = ?", [c.id]);
    const rec = await sys.admin.get("/admin/v1/reconciliation");
    const found = rec.body.anomalies.map((x: any) => `${x.kind}:${x.ownerType}:${x.ownerId}`);
    expect(found).to.include.members([
      `MONEY_WITHOUT_SUCCEEDED_OWNER:order_refund:${a.id}`,
      `MONEY_WITHOUT_SUCCEEDED_OWNER:order_refund:${b.id}`,
      `SUCCEEDED_OWNER_WITHOUT_MONEY:order_refund:${moved}`,
      `AMOUNT_MISMATCH:order_refund:${c.id}`,
    ]);
    // put the books back for the tests after this one
    await sys.sql("update order_refunds set status = 'PROCESSING' where id = ?", [a.id]);
    await sys.sql("update order_refunds set id = ? where id = ?", [b.id, moved]);
    await sys.sql("update order_refunds set amount = 5 where id = ?", [c.id]);
  });
});
