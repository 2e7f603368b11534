import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import { DepositOutcome, type OrdersService } from "../../../proto/gen/billing/orders/v1/orders_pb.ts";
import type { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { eventually } from "../../support/eventually.ts";
import { rpcFailure } from "../wallet/wallet-client.ts";
import { createOrder, merchantBalance, orderClients, orderEventTypes } from "./orders-client.ts";

/**
 * Every path of the status machine, driven through the chain-watcher RPC
 * (ReportDeposit) against real Postgres, Redis and the wallet service.
 */
describe("payment order status paths (ReportDeposit over gRPC/Connect)", () => {
  let clients: ReturnType<typeof orderClients>;
  let orders: Client<typeof OrdersService>;
  let wallet: Client<typeof WalletService>;
  let merchant: { id: string; api: ApiClient };

  const sys = useTestSystem({ workerGroups: ["payments"] });
  before(async () => {
    clients = orderClients(sys);
    orders = clients.orders;
    wallet = clients.wallet;
    merchant = await sys.createMerchant("Status shop");
  });
  after(async () => {
    clients?.close();
  });

  const deposit = (order: { address: string; asset: string }, amount: string, txId: string, confirmations?: number) =>
    orders.reportDeposit({ address: order.address, asset: order.asset, amount, txId, confirmations });

  it("partial then full: PENDING → UNDERPAID → CONFIRMING → PAID, then credits the merchant exactly the amount", async () => {
    const m = await sys.createMerchant("Partial");
    const order = await createOrder(m.api, { asset: "USDT_TRON", amount: "100" });
    const first = await deposit(order, "40", "tx-partial-1", 19);
    expect(first.outcome).to.equal(DepositOutcome.RECORDED);
    expect(first.order).to.include({ status: "UNDERPAID", amountPaid: "40.000000" });
    const second = await deposit(order, "60", "tx-partial-2", 3);
    expect(second.order).to.include({ status: "CONFIRMING", amountPaid: "100.000000" });
    const confirmed = await deposit(order, "60", "tx-partial-2", 19);
    expect(confirmed.outcome).to.equal(DepositOutcome.UPDATED);
    expect(confirmed.order).to.include({ status: "PAID", amountPaid: "100.000000", overpaidAmount: "0.000000", latePayment: false });
    expect(confirmed.order!.paidAt).to.not.equal(undefined);
    expect(await orderEventTypes(sys, order.id)).to.deep.equal([
      "payment_order.created",
      "payment_order.underpaid",
      "payment_order.confirming",
      "payment_order.paid",
    ]);
    await eventually(async () => (await merchantBalance(wallet, m.id, "USDT_TRON")) === "100", 10_000, "merchant credited");
    const settled = await eventually(async () => (await m.api.get(`/api/v1/payment-orders/${order.id}`)).body.settledAt, 10_000, "settledAt");
    expect(Date.parse(settled)).to.be.a("number");
  });

  it("more partial payments stay UNDERPAID, each reported as payment_order.underpaid", async () => {
    const order = await createOrder(merchant.api, { asset: "BTC", amount: "0.01" });
    await deposit(order, "0.002", "tx-under-1", 2);
    const res = await deposit(order, "0.003", "tx-under-2", 2);
    expect(res.order).to.include({ status: "UNDERPAID", amountPaid: "0.00500000" });
    expect(await orderEventTypes(sys, order.id)).to.deep.equal(["payment_order.created", "payment_order.underpaid", "payment_order.underpaid"]);
  });

  it("overpay: PAID with the overpaid amount recorded (a flag, not a status) and everything received credited", async () => {
    const m = await sys.createMerchant("Overpay");
    const order = await createOrder(m.api, { asset: "BTC", amount: "0.01" });
    const res = await deposit(order, "0.0125", "tx-over-1", 2);
    expect(res.order).to.include({ status: "PAID", amountPaid: "0.01250000", overpaidAmount: "0.00250000" });
    expect(await orderEventTypes(sys, order.id)).to.deep.equal(["payment_order.created", "payment_order.paid", "payment_order.overpaid"]);
    await eventually(async () => (await merchantBalance(wallet, m.id, "BTC")) === "0.0125", 10_000, "merchant credited");
    // More money after PAID (before expiry) raises the overpaid amount, is reported again and credited on its own.
    const more = await deposit(order, "0.001", "tx-over-2", 2);
    expect(more.order).to.include({ status: "PAID", amountPaid: "0.01350000", overpaidAmount: "0.00350000" });
    expect((await orderEventTypes(sys, order.id)).at(-1)).to.equal("payment_order.overpaid");
    await eventually(async () => (await merchantBalance(wallet, m.id, "BTC")) === "0.0135", 10_000, "extra credited");
  });

  it("underpayment tolerance: a payment short by at most the percent counts as PAID; beyond it stays UNDERPAID", async () => {
    const tolerant = await createOrder(merchant.api, { asset: "USDT_TRON", amount: "100", underpaymentTolerancePercent: "0.5" });
    const within = await deposit(tolerant, "99.5", "tx-tol-1", 19);
    expect(within.order).to.include({ status: "PAID", amountPaid: "99.500000", overpaidAmount: "0.000000", underpaymentTolerancePercent: "0.5" });
    const strict = await createOrder(merchant.api, { asset: "USDT_TRON", amount: "100", underpaymentTolerancePercent: "0.5" });
    const beyond = await deposit(strict, "99.499999", "tx-tol-2", 19);
    expect(beyond.order!.status).to.equal("UNDERPAID");
    const none = await createOrder(merchant.api, { asset: "USDT_TRON", amount: "100" });
    expect((await deposit(none, "99.999999", "tx-tol-3", 19)).order!.status).to.equal("UNDERPAID");
  });

  it("counts the same txId once; more confirmations update it; fewer or equal change nothing", async () => {
    const order = await createOrder(merchant.api, { asset: "ETH", amount: "1" });
    const a = await deposit(order, "0.4", "0xabc", 1);
    const b = await deposit(order, "0.4", "0xabc", 1);
    expect(a.outcome).to.equal(DepositOutcome.RECORDED);
    expect(b.outcome).to.equal(DepositOutcome.DUPLICATE);
    expect(b.order).to.include({ amountPaid: "0.400000000000000000", status: "UNDERPAID" });
    const up = await deposit(order, "0.4", "0xabc", 5);
    expect(up.outcome).to.equal(DepositOutcome.UPDATED);
    expect(up.order!.payments.map((p) => [p.txId, p.confirmations])).to.deep.equal([["0xabc", 5]]);
    const down = await deposit(order, "0.4", "0xabc", 2);
    expect(down.outcome).to.equal(DepositOutcome.DUPLICATE);
    expect(down.order!.payments[0]!.confirmations).to.equal(5);
    // The same txId with another amount is a watcher bug, refused rather than guessed at.
    const clash = await rpcFailure(deposit(order, "0.5", "0xabc", 6));
    expect(clash).to.include({ code: Code.AlreadyExists, errorCode: "DEPOSIT_CONFLICT" });
    expect(await orderEventTypes(sys, order.id)).to.deep.equal(["payment_order.created", "payment_order.underpaid"]);
  });

  it("waits in CONFIRMING until the asset's required confirmations, then PAID", async () => {
    const order = await createOrder(merchant.api, { asset: "BTC", amount: "0.2" });
    expect((await deposit(order, "0.2", "tx-conf", 0)).order!.status).to.equal("CONFIRMING");
    expect((await deposit(order, "0.2", "tx-conf", 1)).order!.status).to.equal("CONFIRMING");
    expect((await deposit(order, "0.2", "tx-conf", 2)).order!.status).to.equal("PAID");
    expect(await orderEventTypes(sys, order.id)).to.deep.equal(["payment_order.created", "payment_order.confirming", "payment_order.paid"]);
  });

  it("applies concurrent reports of one order one at a time: the exact sum, one paid event", async () => {
    const m = await sys.createMerchant("Concurrent deposits");
    const order = await createOrder(m.api, { asset: "USDT_TRON", amount: "10" });
    const reports = Array.from({ length: 10 }, (_, i) => deposit(order, "1.000001", `tx-conc-${i}`, 19));
    // Each txId twice, concurrently: still counted once.
    const duplicates = Array.from({ length: 10 }, (_, i) => deposit(order, "1.000001", `tx-conc-${i}`, 19));
    await Promise.all([...reports, ...duplicates]);
    const final = (await orders.getPaymentOrder({ merchantId: m.id, id: order.id })).order!;
    expect(final).to.include({ status: "PAID", amountPaid: "10.000010", overpaidAmount: "0.000010" });
    expect(final.payments).to.have.length(10);
    const types = await orderEventTypes(sys, order.id);
    expect(types.filter((t) => t === "payment_order.paid")).to.have.length(1);
    await eventually(async () => (await merchantBalance(wallet, m.id, "USDT_TRON")) === "10.00001", 10_000, "credited once");
  });

  it("answers text Postgres cannot store (NUL) as a client error over RPC too, never Internal", async () => {
    const lookup = await rpcFailure(orders.getPaymentOrderByExternalId({ merchantId: merchant.id, externalId: "a\u0000b" }));
    // Every RPC checks its strings before any use case (services/platform/rpc/validate-request.ts).
    expect(lookup).to.include({ code: Code.InvalidArgument });
    expect(lookup.message).to.match(/^externalId: must not contain the NUL character/);
    const create = await rpcFailure(
      orders.createPaymentOrder({
        merchantId: merchant.id,
        externalId: `rpc-nul-${Date.now()}`,
        externalCustomerId: "c-1",
        asset: "USDT_TRON",
        amount: "10",
        expiresInMinutes: 30,
        metadataJson: JSON.stringify({ note: "a\u0000b" }),
      }),
    );
    expect(create).to.include({ code: Code.InvalidArgument, errorCode: "INVALID_REQUEST" });
    expect(create.message).to.match(/^metadata: /);
  });

  it("rejects deposits to unknown addresses, in the wrong asset, or finer than the asset", async () => {
    const order = await createOrder(merchant.api, { asset: "USDC_ETH", amount: "5" });
    expect(await rpcFailure(orders.reportDeposit({ address: "TNotAnOrderAddress", asset: "USDC_ETH", amount: "1", txId: "t1" }))).to.include({
      code: Code.NotFound,
      errorCode: "DEPOSIT_ADDRESS_NOT_FOUND",
    });
    const mismatch = await rpcFailure(deposit({ address: order.address, asset: "ETH" }, "1", "t2"));
    expect(mismatch).to.include({ code: Code.InvalidArgument, errorCode: "DEPOSIT_ASSET_MISMATCH" });
    expect(mismatch.message).to.match(/^asset: /);
    const fine = await rpcFailure(deposit(order, "1.0000001", "t3"));
    expect(fine).to.include({ code: Code.InvalidArgument });
    expect(fine.message).to.match(/^amount: USDC_ETH has 6 decimals/);
    expect((await rpcFailure(deposit(order, "0", "t4"))).message).to.match(/^amount: must be greater than 0/);
    expect((await rpcFailure(deposit(order, "1", "t5", -1))).message).to.match(/^confirmations: /);
    expect((await rpcFailure(deposit(order, "1", ""))).message).to.match(/^txId: /);
  });
});

describe("payment order expiry and late payments (sandbox clock)", () => {
  let clients: ReturnType<typeof orderClients>;
  let merchant: { id: string; api: ApiClient };

  const sys = useTestSystem({ workerGroups: ["payments"] });
  before(async () => {
    clients = orderClients(sys);
    merchant = await sys.createMerchant("Expiry shop");
  });
  after(async () => {
    clients?.close();
  });

  const advance = async (seconds: number) => {
    const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds });
    expect(res.status).to.equal(200);
  };
  const statusOf = async (id: string) => (await merchant.api.get(`/api/v1/payment-orders/${id}/status`)).body.status as string;

  it("expires PENDING and UNDERPAID orders past expiresAt on the service clock (sweep), never CONFIRMING or PAID ones", async () => {
    const pending = await createOrder(merchant.api, { expiresInMinutes: 5 });
    const underpaid = await createOrder(merchant.api, { expiresInMinutes: 5, amount: "10" });
    const confirming = await createOrder(merchant.api, { expiresInMinutes: 5, amount: "10" });
    const paid = await createOrder(merchant.api, { expiresInMinutes: 5, amount: "10" });
    const longer = await createOrder(merchant.api, { expiresInMinutes: 60 });
    await clients.orders.reportDeposit({ address: underpaid.address, asset: "USDT_TRON", amount: "4", txId: "exp-u", confirmations: 19 });
    await clients.orders.reportDeposit({ address: confirming.address, asset: "USDT_TRON", amount: "10", txId: "exp-c", confirmations: 1 });
    await clients.orders.reportDeposit({ address: paid.address, asset: "USDT_TRON", amount: "10", txId: "exp-p", confirmations: 19 });
    expect(await statusOf(pending.id)).to.equal("PENDING");

    await advance(5 * 60 + 1);
    await eventually(async () => (await statusOf(pending.id)) === "EXPIRED", 10_000, "pending expired");
    await eventually(async () => (await statusOf(underpaid.id)) === "EXPIRED", 10_000, "underpaid expired");
    expect(await statusOf(confirming.id)).to.equal("CONFIRMING");
    expect(await statusOf(paid.id)).to.equal("PAID");
    expect(await statusOf(longer.id)).to.equal("PENDING");
    const expired = (await merchant.api.get(`/api/v1/payment-orders/${pending.id}`)).body;
    expect(expired.expiredAt).to.be.a("string");
    expect(Date.parse(expired.expiredAt)).to.be.at.least(Date.parse(expired.expiresAt));
    expect(await orderEventTypes(sys, pending.id)).to.deep.equal(["payment_order.created", "payment_order.expired"]);
    expect(await orderEventTypes(sys, underpaid.id)).to.deep.equal(["payment_order.created", "payment_order.underpaid", "payment_order.expired"]);
    // The confirmed partial payment of the expired order reached the merchant's balance: money is never lost.
    await eventually(async () => (await merchantBalance(clients.wallet, merchant.id, "USDT_TRON")) === "14", 10_000, "partial and paid credited");
    // The CONFIRMING order completes after its expiry time: it was paid in time.
    const done = await clients.orders.reportDeposit({ address: confirming.address, asset: "USDT_TRON", amount: "10", txId: "exp-c", confirmations: 19 });
    expect(done.order).to.include({ status: "PAID", latePayment: false });
  });

  it("records a payment after expiry as late, flags the order, emits late_payment, and credits it once confirmed", async () => {
    const m = await sys.createMerchant("Late");
    const order = await createOrder(m.api, { expiresInMinutes: 5, amount: "20" });
    await advance(5 * 60 + 1);
    // Reported before the sweep ran: the order is expired on the spot, then the payment is late.
    const late = await clients.orders.reportDeposit({ address: order.address, asset: "USDT_TRON", amount: "20", txId: "late-1", confirmations: 0 });
    expect(late.outcome).to.equal(DepositOutcome.RECORDED);
    expect(late.order).to.include({ status: "EXPIRED", latePayment: true, amountPaid: "0.000000", amountPaidLate: "20.000000" });
    expect(late.order!.payments.map((p) => [p.txId, p.late])).to.deep.equal([["late-1", true]]);
    expect(await orderEventTypes(sys, order.id)).to.deep.equal(["payment_order.created", "payment_order.expired", "payment_order.late_payment"]);
    expect(await merchantBalance(clients.wallet, m.id, "USDT_TRON")).to.equal("0");
    await clients.orders.reportDeposit({ address: order.address, asset: "USDT_TRON", amount: "20", txId: "late-1", confirmations: 19 });
    await eventually(async () => (await merchantBalance(clients.wallet, m.id, "USDT_TRON")) === "20", 10_000, "late payment credited");
    expect((await m.api.get(`/api/v1/payment-orders/${order.id}/status`)).body.status).to.equal("EXPIRED");
  });

  it("flags a transfer to a PAID order after its expiry as late too: status stays PAID, the money is credited", async () => {
    const m = await sys.createMerchant("Late after paid");
    const order = await createOrder(m.api, { expiresInMinutes: 5, amount: "5" });
    await clients.orders.reportDeposit({ address: order.address, asset: "USDT_TRON", amount: "5", txId: "paid-1", confirmations: 19 });
    await advance(5 * 60 + 1);
    const late = await clients.orders.reportDeposit({ address: order.address, asset: "USDT_TRON", amount: "1", txId: "paid-late-2", confirmations: 19 });
    expect(late.order).to.include({ status: "PAID", latePayment: true, amountPaid: "5.000000", amountPaidLate: "1.000000", overpaidAmount: "0.000000" });
    expect(await orderEventTypes(sys, order.id)).to.deep.equal(["payment_order.created", "payment_order.paid", "payment_order.late_payment"]);
    await eventually(async () => (await merchantBalance(clients.wallet, m.id, "USDT_TRON")) === "6", 10_000, "both credited");
  });

  it("ExpireOrders (the operator's RPC) runs the sweep on demand", async () => {
    const order = await createOrder(merchant.api, { expiresInMinutes: 5 });
    await advance(5 * 60 + 1);
    const res = await clients.orders.expireOrders({});
    expect(res.expired).to.be.at.most(1);
    await eventually(async () => (await statusOf(order.id)) === "EXPIRED", 10_000, "expired");
  });
});
