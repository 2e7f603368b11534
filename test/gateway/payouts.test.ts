import { expect } from "chai";
import { compileBody } from "../../gateway/validation/ajv.ts";
import { balanceObjectSchema } from "../../gateway/schemas/balance.ts";
import { adminPayoutSchema, destinationSchema, payoutSchema } from "../../gateway/schemas/payouts.ts";
import { ALL_JOBS } from "../../workers/registry.ts";
import { payoutJobs } from "../../services/payouts/jobs.ts";
import { type TestSystem, useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { createOrder } from "../services/orders/orders-client.ts";
import { make } from "../support/factories/index.ts";

const TRON_ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const TRON_ADDRESS_2 = "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL";
const validPayout = compileBody(payoutSchema);
const validDestination = compileBody(destinationSchema);

let deposits = 0;
/** Funds a merchant's available balance with a paid USDT_TRON order (the real way money comes in). */
async function fund(sys: TestSystem, api: ApiClient, amount: string): Promise<void> {
  const before = (await balances(api)).available.USDT_TRON ?? "0";
  const order = await createOrder(api, { asset: "USDT_TRON", amount, currency: "USD" });
  const paid = await sys.admin.post("/admin/v1/deposits", {
    address: order.address,
    asset: "USDT_TRON",
    amount,
    txId: `payout-fund-${process.pid}-${++deposits}`,
    confirmations: 19,
  });
  expect(paid.status, paid.text).to.be.oneOf([200, 201]);
  await eventually(async () => ((await balances(api)).available.USDT_TRON !== before ? true : undefined), 15_000, "the order's credit");
}

async function balances(api: ApiClient): Promise<{ available: Record<string, string>; pending: Record<string, string> }> {
  const res = await api.get("/api/v1/balance");
  expect(res.status, res.text).to.equal(200);
  expect(compileBody(balanceObjectSchema)(res.body), res.text).to.equal(true);
  const map = (list: { asset: string; amount: string }[]) => Object.fromEntries(list.map((b) => [b.asset, b.amount]));
  return { available: map(res.body.available), pending: map(res.body.pending) };
}

async function activeDestination(sys: TestSystem, api: ApiClient, address = TRON_ADDRESS): Promise<string> {
  const res = await api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address, label: "cold wallet" });
  expect(res.status, res.text).to.equal(201);
  await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 3600 });
  return res.body.id;
}

async function payoutOf(api: ApiClient, id: string) {
  const res = await api.get(`/api/v1/payouts/${id}`);
  expect(res.status, res.text).to.equal(200);
  expect(validPayout(res.body), res.text).to.equal(true);
  return res.body;
}

const waitStatus = (api: ApiClient, id: string, status: string) =>
  eventually(
    async () => {
      const p = await payoutOf(api, id);
      return p.status === status ? p : undefined;
    },
    15_000,
    `payout ${id} ${status}`,
  );

async function booksClean(sys: TestSystem) {
  const ledger = await sys.admin.get("/admin/v1/ledger/check");
  expect(ledger.body.ok, ledger.text).to.equal(true);
  const rec = await sys.admin.get("/admin/v1/reconciliation");
  expect(rec.body.status, rec.text).to.equal("ok");
}

describe("payouts over the real stack (sandbox chain)", () => {
  let merchant: { id: string; api: ApiClient };
  let other: { id: string; api: ApiClient };
  let destinationId: string;

  const sys = useTestSystem({ env: { PAYOUT_DESTINATION_COOLDOWN_MINUTES: "60" } });
  before(async () => {
    merchant = await sys.createMerchant("Payout shop");
    other = await sys.createMerchant("Other shop");
    await fund(sys, merchant.api, "100");
  });

  describe("destinations", () => {
    it("creates one PENDING_ACTIVATION for the cooling period, records payout_destination.created at once, ACTIVE once the sandbox clock passes it", async () => {
      const res = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS, label: "cold wallet" });
      expect(res.status, res.text).to.equal(201);
      expect(validDestination(res.body), res.text).to.equal(true);
      expect(res.body).to.include({
        object: "payout_destination",
        asset: "USDT_TRON",
        network: "TRON",
        address: TRON_ADDRESS,
        label: "cold wallet",
        status: "PENDING_ACTIVATION",
      });
      expect(new Date(res.body.activatesAt).getTime() - new Date(res.body.createdAt).getTime()).to.equal(60 * 60_000);
      const events = await sys.sql("select type, data from events where data->>'id' = ?", [res.body.id]);
      expect(events.map((e: any) => e.type)).to.deep.equal(["payout_destination.created"]);
      expect(events[0].data.status).to.equal("PENDING_ACTIVATION");

      const early = await merchant.api.post("/api/v1/payouts", { destinationId: res.body.id, amount: "10" });
      expect(early.status, early.text).to.equal(409);
      expect(early.body.error).to.equal("DESTINATION_NOT_ACTIVE");
      expect(early.body.message).to.contain("cooling period");

      await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 3599 });
      expect((await merchant.api.get(`/api/v1/payout-destinations/${res.body.id}`)).body.status).to.equal("PENDING_ACTIVATION");
      await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 1 });
      expect((await merchant.api.get(`/api/v1/payout-destinations/${res.body.id}`)).body.status).to.equal("ACTIVE");
      destinationId = res.body.id;
      const listed = await merchant.api.get("/api/v1/payout-destinations?status=ACTIVE");
      expect(listed.body.data.map((d: any) => d.id)).to.deep.equal([destinationId]);
    });

    it("refuses a wrong address with 400 naming address and the rule, and the same asset + address twice with 409 DESTINATION_EXISTS", async () => {
      const bad = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u" });
      expect(bad.status, bad.text).to.equal(400);
      expect(bad.body.error).to.equal("INVALID_REQUEST");
      expect(bad.body.message).to.match(/^address: .*checksum/);
      const eth = await merchant.api.post("/api/v1/payout-destinations", { asset: "ETH", address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD" });
      expect(eth.status).to.equal(400);
      expect(eth.body.message).to.match(/^address: .*EIP-55/);
      const btcOnEth = await merchant.api.post("/api/v1/payout-destinations", { asset: "BTC", address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" });
      expect(btcOnEth.status).to.equal(400);
      const twice = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS });
      expect(twice.status, twice.text).to.equal(409);
      expect(twice.body.error).to.equal("DESTINATION_EXISTS");
      // An EVM address in another case is the same address.
      const first = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDC_ETH", address: "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359" });
      expect(first.status, first.text).to.equal(201);
      expect(first.body.address).to.equal("0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359");
      const again = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDC_ETH", address: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359" });
      expect(again.body.error).to.equal("DESTINATION_EXISTS");
    });

    it("DELETE answers REMOVED (kept), a payout to it is 409 DESTINATION_NOT_ACTIVE, and the address can be registered again", async () => {
      const created = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS_2 });
      const removed = await merchant.api.delete(`/api/v1/payout-destinations/${created.body.id}`);
      expect(removed.status, removed.text).to.equal(200);
      expect(removed.body.status).to.equal("REMOVED");
      expect((await merchant.api.get(`/api/v1/payout-destinations/${created.body.id}`)).body.status).to.equal("REMOVED");
      const pay = await merchant.api.post("/api/v1/payouts", { destinationId: created.body.id, amount: "10" });
      expect(pay.status).to.equal(409);
      expect(pay.body.error).to.equal("DESTINATION_NOT_ACTIVE");
      expect(pay.body.message).to.contain("removed");
      const again = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS_2 });
      expect(again.status, again.text).to.equal(201);
    });

    it("another merchant's destination answers 404 DESTINATION_NOT_FOUND on GET, DELETE and as a payout's destination", async () => {
      for (const res of [
        await other.api.get(`/api/v1/payout-destinations/${destinationId}`),
        await other.api.delete(`/api/v1/payout-destinations/${destinationId}`),
        await other.api.post("/api/v1/payouts", { destinationId, amount: "10" }),
        await merchant.api.get("/api/v1/payout-destinations/00000000-0000-4000-8000-000000000000"),
      ]) {
        expect(res.status, res.text).to.equal(404);
        expect(res.body.error).to.equal("DESTINATION_NOT_FOUND");
      }
      expect((await other.api.get("/api/v1/payout-destinations")).body.data).to.deep.equal([]);
    });
  });

  describe("payouts", () => {
    it("refuses a bad amount with 400 naming amount (zero, decimals, the minimum stated) and too much with 409 MERCHANT_BALANCE_INSUFFICIENT, nothing moved", async () => {
      const before = await balances(merchant.api);
      for (const [amount, rule] of [
        ["0", /greater than 0/],
        ["5.1234567", /at most 6 decimals/],
        ["4.99", /minimum of 5/],
        ["-1", /.*/],
      ] as const) {
        const res = await merchant.api.post("/api/v1/payouts", { destinationId, amount });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.message).to.match(/amount/);
        expect(res.body.message).to.match(rule);
      }
      const tooMuch = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "99.5" });
      expect(tooMuch.status, tooMuch.text).to.equal(409);
      expect(tooMuch.body.error).to.equal("MERCHANT_BALANCE_INSUFFICIENT");
      expect(tooMuch.body.message).to.contain("100.5");
      expect(await balances(merchant.api)).to.deep.equal(before);
      expect((await merchant.api.get("/api/v1/payouts")).body.data).to.deep.equal([]);
    });

    it("goes PENDING → PROCESSING (txHash) → PAID once the sandbox clock passes 19 × 3 s, the balance exact at each step", async () => {
      expect((await balances(merchant.api)).available.USDT_TRON).to.equal("100");
      const res = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "20", metadata: { invoice: "P-1" } }, { "idempotency-key": "payout-1" });
      expect(res.status, res.text).to.equal(201);
      expect(validPayout(res.body), res.text).to.equal(true);
      expect(res.body).to.include({
        object: "payout",
        status: "PENDING",
        destinationId,
        asset: "USDT_TRON",
        network: "TRON",
        address: TRON_ADDRESS,
        amount: "20",
        fee: "1",
        txHash: null,
        failureReason: null,
        paidAt: null,
      });
      expect(res.body.metadata).to.deep.equal({ invoice: "P-1" });
      expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "79" }, pending: { USDT_TRON: "21" } });

      const replay = await merchant.api.post(
        "/api/v1/payouts",
        { destinationId, amount: "20", metadata: { invoice: "P-1" } },
        { "idempotency-key": "payout-1" },
      );
      expect(replay.body.id).to.equal(res.body.id);

      const processing = await waitStatus(merchant.api, res.body.id, "PROCESSING");
      expect(processing.txHash).to.match(/^[0-9a-f]{64}$/);
      expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "79" }, pending: { USDT_TRON: "21" } });
      await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 56 });
      await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 1 });
      const paid = await waitStatus(merchant.api, res.body.id, "PAID");
      expect(paid.paidAt).to.be.a("string");
      expect(paid.txHash).to.equal(processing.txHash);
      expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "79" }, pending: {} });

      const events = await sys.sql("select type, data from events where data->>'id' = ? order by seq", [res.body.id]);
      expect(events.map((e: any) => e.type)).to.deep.equal(["payout.created", "payout.processing", "payout.paid"]);
      expect(events[2].data).to.include({ status: "PAID", txHash: processing.txHash });
      const history = await merchant.api.get("/api/v1/balance-transactions?type=PAYOUT");
      expect(history.body.data).to.have.length(1);
      expect(history.body.data[0]).to.include({ type: "PAYOUT", amount: "-21", balanceAfter: "79", sourceType: "payout", sourceId: res.body.id });
      const chain = await sys.sql("select submissions from payout_sandbox_chain where payout_id = ?", [res.body.id]);
      expect(chain).to.have.length(1);
      await booksClean(sys);
    });

    it("goes PROCESSING → FAILED by the sandbox chain; amount + fee return in a PAYOUT_REVERSAL, the balance exact at each step", async () => {
      const res = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "10" });
      expect(res.status, res.text).to.equal(201);
      expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "68" }, pending: { USDT_TRON: "11" } });
      await waitStatus(merchant.api, res.body.id, "PROCESSING");
      const early = await sys.admin.post(`/admin/v1/sandbox/payouts/${res.body.id}/fail`, {});
      expect(early.status).to.equal(400);
      const failed = await sys.admin.post(`/admin/v1/sandbox/payouts/${res.body.id}/fail`, { reason: "address blacklisted by the token issuer" });
      expect(failed.status, failed.text).to.equal(200);
      expect(compileBody(adminPayoutSchema)(failed.body), failed.text).to.equal(true);
      expect(failed.body).to.include({ status: "FAILED", failureReason: "address blacklisted by the token issuer", merchantId: merchant.id });
      expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "79" }, pending: {} });
      const again = await sys.admin.post(`/admin/v1/sandbox/payouts/${res.body.id}/fail`, { reason: "twice" });
      expect(again.status).to.equal(409);
      expect(again.body.error).to.equal("INVALID_STATUS_TRANSITION");
      const cancel = await merchant.api.post(`/api/v1/payouts/${res.body.id}/cancel`, {});
      expect(cancel.status).to.equal(409);
      expect(cancel.body.error).to.equal("INVALID_STATUS_TRANSITION");
      const reversal = await merchant.api.get("/api/v1/balance-transactions?type=PAYOUT_REVERSAL");
      expect(reversal.body.data[0]).to.include({ type: "PAYOUT_REVERSAL", amount: "11", balanceAfter: "79", sourceType: "payout", sourceId: res.body.id });
      const events = await sys.sql("select type from events where data->>'id' = ? order by seq", [res.body.id]);
      expect(events.map((e: any) => e.type)).to.deep.equal(["payout.created", "payout.processing", "payout.failed"]);
      await booksClean(sys);
    });

    it("lists newest first with keyset pages and filters; another merchant's payout answers 404 PAYOUT_NOT_FOUND", async () => {
      const all = await merchant.api.get("/api/v1/payouts?limit=1");
      expect(all.body.data).to.have.length(1);
      expect(all.body.data[0].status).to.equal("FAILED");
      const next = await merchant.api.get(`/api/v1/payouts?limit=1&cursor=${all.body.nextCursor}`);
      expect(next.body.data[0].status).to.equal("PAID");
      expect((await merchant.api.get("/api/v1/payouts?status=PAID")).body.data).to.have.length(1);
      expect((await merchant.api.get(`/api/v1/payouts?destinationId=${destinationId}&asset=USDT_TRON`)).body.data).to.have.length(2);
      expect((await merchant.api.get("/api/v1/payouts?asset=BTC")).body.data).to.have.length(0);
      const bad = await merchant.api.get("/api/v1/payouts?status=OPENING");
      expect(bad.status).to.equal(400);
      const id = all.body.data[0].id;
      for (const res of [await other.api.get(`/api/v1/payouts/${id}`), await other.api.post(`/api/v1/payouts/${id}/cancel`, {})]) {
        expect(res.status).to.equal(404);
        expect(res.body.error).to.equal("PAYOUT_NOT_FOUND");
      }
      const admin = await sys.admin.get(`/admin/v1/payouts?merchantId=${merchant.id}&status=PAID`);
      expect(admin.body.data).to.have.length(1);
      expect(admin.body.data[0].merchantId).to.equal(merchant.id);
    });

    it("20 parallel payouts on a balance that covers 14 → exactly 14 created, 6 × 409, the balance exactly 0", async () => {
      const shop = await sys.createMerchant("Parallel shop");
      await fund(sys, shop.api, "84");
      const dest = await activeDestination(sys, shop.api);
      const answers = await Promise.all(Array.from({ length: 20 }, () => shop.api.post("/api/v1/payouts", { destinationId: dest, amount: "5" })));
      const created = answers.filter((a) => a.status === 201);
      expect(created, answers.map((a) => a.status).join()).to.have.length(14);
      for (const a of answers.filter((a) => a.status !== 201)) {
        expect(a.status).to.equal(409);
        expect(a.body.error).to.equal("MERCHANT_BALANCE_INSUFFICIENT");
      }
      const after = await balances(shop.api);
      expect(after.available.USDT_TRON).to.equal("0");
      expect(after.pending.USDT_TRON).to.equal("84");
      await booksClean(sys);
    });
  });
});

describe("reconciliation of payouts", () => {
  const sys = useTestSystem({ env: { PAYOUT_DESTINATION_COOLDOWN_MINUTES: "0" } });

  it("is clean after a PAID payout, and reports amounts that differ, a row without its money and a payout PAID twice", async () => {
    const shop = await sys.createMerchant("Reconciled shop");
    await fund(sys, shop.api, "50");
    const dest = (await shop.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS })).body.id;
    const res = await shop.api.post("/api/v1/payouts", { destinationId: dest, amount: "10" });
    await waitStatus(shop.api, res.body.id, "PROCESSING");
    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 });
    await waitStatus(shop.api, res.body.id, "PAID");
    await booksClean(sys);
    const kinds = async () => {
      const rec = await sys.admin.get("/admin/v1/reconciliation");
      return rec.body.anomalies.map((a: any) => `${a.kind}/${a.ownerType}`).sort();
    };
    // The row says more than the ledger moved (and the PAYOUTS account then disagrees with the rows).
    await sys.sql("update payouts set amount = amount + 1 where id = ?", [res.body.id]);
    expect(await kinds()).to.deep.equal(["AMOUNT_MISMATCH/payout", "AMOUNT_MISMATCH/payouts_account"]);
    await sys.sql("update payouts set amount = amount - 1 where id = ?", [res.body.id]);
    // A payout PAID twice (a second payout.paid for it).
    const [event] = await sys.sql("select merchant_id, data from events where type = 'payout.paid' and data->>'id' = ?", [res.body.id]);
    await make.event(sys, { merchantId: event.merchant_id, type: "payout.paid", data: event.data });
    expect(await kinds()).to.deep.equal(["PAYOUT_PAID_TWICE/payout"]);
    await sys.sql("delete from events where id in (select id from events where type = 'payout.paid' and data->>'id' = ? order by seq desc limit 1)", [
      res.body.id,
    ]);
    // A debited row whose money is missing: a second row claiming a debit no ledger transaction made.
    await make.payout(sys, { destinationId: dest, status: "PAID", amount: "0.5", fee: 0 });
    expect(await kinds()).to.deep.equal(["AMOUNT_MISMATCH/payouts_account", "SUCCEEDED_OWNER_WITHOUT_MONEY/payout"]);
  });
});

describe("payouts held before the chain (no payouts jobs): cancel, review, approve, reject", () => {
  let merchant: { id: string; api: ApiClient };
  let destinationId: string;

  const withoutPayouts = ALL_JOBS.filter((h) => !payoutJobs.includes(h as never));
  const sys = useTestSystem({ env: { PAYOUT_DESTINATION_COOLDOWN_MINUTES: "0" }, jobs: withoutPayouts });
  before(async () => {
    merchant = await sys.createMerchant("Held shop");
    await fund(sys, merchant.api, "100");
    const res = await merchant.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS });
    expect(res.body.status).to.equal("ACTIVE");
    destinationId = res.body.id;
  });

  it("cancel: PENDING → CANCELLED, amount + fee back at once; cancelling again is 409 INVALID_STATUS_TRANSITION", async () => {
    const res = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "30" });
    expect(res.status, res.text).to.equal(201);
    expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "69" }, pending: { USDT_TRON: "31" } });
    const cancelled = await merchant.api.post(`/api/v1/payouts/${res.body.id}/cancel`, {});
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal("CANCELLED");
    expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "100" }, pending: {} });
    const again = await merchant.api.post(`/api/v1/payouts/${res.body.id}/cancel`, {});
    expect(again.status).to.equal(409);
    expect(again.body.error).to.equal("INVALID_STATUS_TRANSITION");
    const calls = await sys.sql("select kind, status from payout_calls where payout_id = ? order by kind", [res.body.id]);
    expect(calls).to.deep.equal([
      { kind: "DEBIT", status: "DONE" },
      { kind: "REVERSAL", status: "DONE" },
      { kind: "SUBMIT", status: "VOID" },
    ]);
    const events = await sys.sql("select type from events where data->>'id' = ? order by seq", [res.body.id]);
    expect(events.map((e: any) => e.type)).to.deep.equal(["payout.created", "payout.cancelled"]);
  });

  it("above the merchant's review threshold (USD) a payout waits IN_REVIEW; approve hands it to the chain, reject fails it REJECTED with the money back", async () => {
    const patch = await sys.admin.request("PATCH", `/admin/v1/merchants/${merchant.id}`, { body: { payoutReviewAbove: "25" } });
    expect(patch.status, patch.text).to.equal(200);
    expect(patch.body.payoutReviewAbove).to.equal("25");
    const small = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "25" });
    expect(small.body.status).to.equal("PENDING");
    const big = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "25.01" });
    expect(big.body.status).to.equal("IN_REVIEW");
    const other = await merchant.api.post("/api/v1/payouts", { destinationId, amount: "30" });
    expect(other.body.status).to.equal("IN_REVIEW");
    expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "16.99" }, pending: { USDT_TRON: "83.01" } });
    const waiting = await sys.admin.get("/admin/v1/payouts?status=IN_REVIEW");
    expect(waiting.body.data.map((p: any) => p.id).sort()).to.deep.equal([big.body.id, other.body.id].sort());
    expect((await merchant.api.post(`/api/v1/payouts/${big.body.id}/cancel`, {})).body.error).to.equal("INVALID_STATUS_TRANSITION");

    const approved = await sys.admin.post(`/admin/v1/payouts/${big.body.id}/approve`, {});
    expect(approved.status, approved.text).to.equal(200);
    expect(approved.body.status).to.equal("PROCESSING");
    expect(approved.body.txHash).to.match(/^[0-9a-f]{64}$/);
    const rejected = await sys.admin.post(`/admin/v1/payouts/${other.body.id}/reject`, {});
    expect(rejected.status, rejected.text).to.equal(200);
    expect(rejected.body).to.include({ status: "FAILED", failureReason: "REJECTED" });
    expect((await sys.admin.post(`/admin/v1/payouts/${other.body.id}/approve`, {})).body.error).to.equal("INVALID_STATUS_TRANSITION");
    expect((await sys.admin.post(`/admin/v1/payouts/${small.body.id}/reject`, {})).body.error).to.equal("INVALID_STATUS_TRANSITION");
    expect(await balances(merchant.api)).to.deep.equal({ available: { USDT_TRON: "47.99" }, pending: { USDT_TRON: "52.01" } });
    const off = await sys.admin.request("PATCH", `/admin/v1/merchants/${merchant.id}`, { body: { payoutReviewAbove: null } });
    expect(off.body.payoutReviewAbove).to.equal(null);
    await booksClean(sys);
  });
});
