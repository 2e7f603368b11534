import { expect } from "chai";
import { add, amount, formatAmount, zero, type Amount } from "../../services/platform/money.ts";
import { compileBody } from "../../gateway/validation/ajv.ts";
import { balanceObjectSchema, balanceTransactionSchema } from "../../gateway/schemas/balance.ts";
import { refundSchema } from "../../gateway/schemas/refunds.ts";
import { chargeSchema } from "../../gateway/schemas/subscription-charges.ts";
import { pageSchema } from "../../gateway/schemas/common.ts";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { approvedSubscription } from "../support/billing.ts";
import { createOrder } from "../services/orders/orders-client.ts";

/** The merchant's balance and its history, from charges, refunds and paid orders over the real stack. */
describe("GET /api/v1/balance and /api/v1/balance-transactions", () => {
  let merchant: { id: string; api: ApiClient };
  let rpc: ReturnType<typeof subscriptionsRpc>;
  const ids: { charges: string[]; refunds: string[]; orderId: string } = { charges: [], refunds: [], orderId: "" };

  const sys = useTestSystem();
  before(async () => {
    merchant = await sys.createMerchant("Balance shop");
    rpc = subscriptionsRpc(sys);
    const api = merchant.api;
    // Two USDT charges, one BTC charge, a partial and a full refund, a paid USDT order.
    for (const [plan, asset, credits] of [
      [{ amount: "10" }, "USDT_TRON", { USDT_TRON: "100" }],
      [{ amount: "4.5" }, "USDT_TRON", { USDT_TRON: "100" }],
      [{ amount: "10" }, "BTC", { BTC: "1" }],
    ] as const) {
      const s = await approvedSubscription(sys, api, rpc.client, { plan, asset, credits });
      ids.charges.push((await api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`)).body.data[0].id);
    }
    for (const body of [{ chargeId: ids.charges[0], amount: "2.25" }, { chargeId: ids.charges[2], amount: "2.5" }, { chargeId: ids.charges[1] }]) {
      const res = await api.post("/api/v1/refunds", body);
      expect(res.status, res.text).to.equal(201);
      expect(compileBody(refundSchema)(res.body), JSON.stringify(res.body)).to.equal(true);
      ids.refunds.push(res.body.id);
    }
    const order = await createOrder(api, { asset: "USDT_TRON", amount: "25", currency: "USD" });
    ids.orderId = order.id;
    const paid = await sys.admin.post("/admin/v1/deposits", {
      address: order.address,
      asset: "USDT_TRON",
      amount: "25",
      txId: "balance-tx-1",
      confirmations: 19,
    });
    expect(paid.status, paid.text).to.be.oneOf([200, 201]);
    await eventually(async () => ((await balanceOf(api)).USDT_TRON === "32.75" ? true : undefined), 15_000, "the order's credit");
  });
  after(async () => {
    rpc?.close();
  });

  async function balanceOf(api: ApiClient): Promise<Record<string, string>> {
    const res = await api.get("/api/v1/balance");
    expect(res.status, res.text).to.equal(200);
    return Object.fromEntries(res.body.available.map((b: any) => [b.asset, b.amount]));
  }

  async function allTransactions(api: ApiClient, query = "", limit = 100): Promise<any[]> {
    const items: any[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: any; text: string } = await api.get(
        `/api/v1/balance-transactions?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(res.status, res.text).to.equal(200);
      expect(compileBody(pageSchema(balanceTransactionSchema))(res.body), res.text).to.equal(true);
      items.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    return items;
  }

  it("the balance: one entry per asset held, straight from the ledger", async () => {
    const res = await merchant.api.get("/api/v1/balance");
    expect(compileBody(balanceObjectSchema)(res.body), res.text).to.equal(true);
    // USDT: 10 + 4.5 − 2.25 − 4.5 + 25; BTC: 0.00016667 − 0.00004166.
    expect(res.body).to.deep.equal({
      object: "balance",
      available: [
        { asset: "USDT_TRON", amount: "32.75" },
        { asset: "BTC", amount: "0.00012501" },
      ],
      // No payout in flight.
      pending: [],
    });
  });

  it("every movement, newest first, signed, with the balance after it; per asset they sum to the balance", async () => {
    const items = await allTransactions(merchant.api);
    expect(items).to.have.length(7);
    expect(items.map((t) => t.type).sort()).to.deep.equal([
      "PAYMENT_ORDER",
      "REFUND",
      "REFUND",
      "REFUND",
      "SUBSCRIPTION_CHARGE",
      "SUBSCRIPTION_CHARGE",
      "SUBSCRIPTION_CHARGE",
    ]);
    for (const t of items) {
      expect(t.object).to.equal("balance_transaction");
      if (t.type === "REFUND") {
        expect(t.amount.startsWith("-")).to.equal(true);
        expect(t.sourceType).to.equal("refund");
        expect(ids.refunds).to.include(t.sourceId);
      } else expect(t.amount.startsWith("-")).to.equal(false);
      if (t.type === "SUBSCRIPTION_CHARGE")
        expect({ sourceType: t.sourceType, known: ids.charges.includes(t.sourceId) }).to.deep.equal({ sourceType: "subscription_charge", known: true });
      if (t.type === "PAYMENT_ORDER") expect(t).to.include({ sourceType: "payment_order", sourceId: ids.orderId, amount: "25" });
    }
    const times = items.map((t) => t.createdAt);
    expect([...times].sort().reverse()).to.deep.equal(times);

    const balance = await balanceOf(merchant.api);
    for (const asset of Object.keys(balance)) {
      const mine = items.filter((t) => t.asset === asset).reverse();
      let running: Amount = zero();
      for (const t of mine) {
        running = add(running, amount(t.amount));
        expect(t.balanceAfter, `${asset} ${t.id}`).to.equal(formatAmount(running));
      }
      expect(formatAmount(running)).to.equal(balance[asset]);
    }
    expect(await sys.admin.get(`/admin/v1/merchants/${merchant.id}/balance`).then((r) => r.body)).to.deep.equal(
      await merchant.api.get("/api/v1/balance").then((r) => r.body),
    );
  });

  it("filters by asset, type and createdAfter; pages by keyset without gaps or repeats", async () => {
    const all = await allTransactions(merchant.api);
    const paged = await allTransactions(merchant.api, "", 2);
    expect(paged.map((t) => t.id)).to.deep.equal(all.map((t) => t.id));

    const btc = await allTransactions(merchant.api, "&asset=BTC");
    expect(btc.map((t) => t.id)).to.deep.equal(all.filter((t) => t.asset === "BTC").map((t) => t.id));
    const refunds = await allTransactions(merchant.api, "&type=REFUND");
    expect(refunds.map((t) => t.id)).to.deep.equal(all.filter((t) => t.type === "REFUND").map((t) => t.id));
    const both = await allTransactions(merchant.api, "&type=REFUND&asset=USDT_TRON");
    expect(both).to.have.length(2);
    const oldest = all.at(-1)!;
    const after = await allTransactions(merchant.api, `&createdAfter=${encodeURIComponent(oldest.createdAt)}`);
    expect(after.map((t) => t.id)).to.deep.equal(all.filter((t) => t.createdAt > oldest.createdAt).map((t) => t.id));

    for (const query of ["type=BOGUS", "asset=DOGE", "createdAfter=yesterday", "cursor=forged", "limit=0", "surprise=1"]) {
      const res = await merchant.api.get(`/api/v1/balance-transactions?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.contain(query.split("=")[0]);
    }
  });

  it("tenant isolation, the charge record's refunded totals, and the operator view", async () => {
    const other = await sys.createMerchant("Empty shop");
    expect((await other.api.get("/api/v1/balance")).body).to.deep.equal({ object: "balance", available: [], pending: [] });
    expect((await other.api.get("/api/v1/balance-transactions")).body.data).to.deep.equal([]);
    expect((await other.api.get(`/api/v1/refunds/${ids.refunds[0]}`)).status).to.equal(404);
    expect((await other.api.get("/api/v1/refunds")).body.data).to.deep.equal([]);
    expect((await merchant.api.get("/api/v1/refunds")).body.data.map((r: any) => r.id)).to.deep.equal([...ids.refunds].reverse());

    const [row] = await sys.sql<{ subscription_id: string }>("select subscription_id from subscription_charges where id = ?", [ids.charges[0]]);
    const charges = await merchant.api.get(`/api/v1/subscriptions/${row!.subscription_id}/charges`);
    expect(compileBody(pageSchema(chargeSchema))(charges.body), charges.text).to.equal(true);
    expect(charges.body.data[0]).to.include({ amountRefunded: "2.25", assetAmountRefunded: "2.25" });
    const byCharge = await merchant.api.get(`/api/v1/refunds?chargeId=${ids.charges[0]}`);
    expect(byCharge.body.data.map((r: any) => r.id)).to.deep.equal([ids.refunds[0]]);
    const bySubscription = await merchant.api.get(`/api/v1/refunds?subscriptionId=${row!.subscription_id}&limit=1`);
    expect(bySubscription.body).to.include({ hasMore: false });

    expect((await sys.admin.get("/admin/v1/merchants/00000000-0000-4000-8000-000000000000/balance")).status).to.equal(404);
    expect((await sys.http.get(`/admin/v1/merchants/${merchant.id}/balance`)).status).to.equal(401);
    expect((await sys.http.get("/api/v1/balance")).status).to.equal(401);
  });
});
