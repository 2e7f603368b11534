import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { RefundsService } from "../../../proto/gen/billing/subscriptions/v1/refunds_pb.ts";
import { RefundOutcome, WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { add, amount, convert, formatAmount, sub, zero } from "../../../services/platform/money.ts";
import { lockAccounts, openAccount, postTransactions } from "../../../services/wallet/ledger.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { balances, createWalletUser, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { createChange } from "../../support/change-sessions.ts";
import { advanceBy, approvedSubscription, DAY, subscriptionOf, waitForStatus } from "../../support/billing.ts";
import { settleRefund } from "../../../services/subscriptions/refunds/settle-refund.ts";
import { subscriptionPorts } from "../../../services/subscriptions/ports.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { make } from "../../support/factories/index.ts";

/** Refunds through the real stack: REST → gateway → refunds RPC → wallet RPC → Postgres, events in the outbox. */
describe("refunds of subscription charges", () => {
  let merchant: { id: string; api: ApiClient };
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;
  let internal: RpcClients;

  const sys = useTestSystem();
  before(async () => {
    merchant = await sys.createMerchant("Refunds");
    api = merchant.api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
    internal = new RpcClients(sys.config.internalApiToken);
  });
  after(async () => {
    rpc?.close();
    internal?.close();
  });

  /** A subscription paid with its first charge; returns the charge record (REST). */
  async function paidCharge(options: { plan?: Record<string, unknown>; credits?: Record<string, string>; asset?: string; on?: ApiClient } = {}) {
    const on = options.on ?? api;
    const s = await approvedSubscription(sys, on, client, { plan: options.plan, credits: options.credits, asset: options.asset });
    const res = await on.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`);
    expect(res.status, res.text).to.equal(200);
    const charge = res.body.data[0];
    expect(charge.status).to.equal("SUCCEEDED");
    return { ...s, charge };
  }

  const refund = (body: Record<string, unknown>, headers?: Record<string, string>, on: ApiClient = api) => on.post("/api/v1/refunds", body, headers);
  const chargeOf = async (subscriptionId: string, chargeId: string, on: ApiClient = api) => {
    const res = await on.get(`/api/v1/subscriptions/${subscriptionId}/charges?limit=100`);
    return res.body.data.find((c: any) => c.id === chargeId);
  };
  const merchantBalance = async (on: ApiClient = api): Promise<Record<string, string>> => {
    const res = await on.get("/api/v1/balance");
    expect(res.status, res.text).to.equal(200);
    return Object.fromEntries(res.body.available.map((b: any) => [b.asset, b.amount]));
  };
  const ledgerCheck = async () => {
    const res = await sys.admin.get("/admin/v1/ledger/check");
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it("a full refund returns exactly the charge's asset amount to the paying account; the subscription is untouched", async () => {
    const { subscriptionId, user, charge } = await paidCharge({ plan: { amount: "10.50" }, credits: { USDT_TRON: "100" } });
    const before = await subscriptionOf(api, subscriptionId);
    expect(charge).to.include({ amountRefunded: "0", assetAmountRefunded: "0" });

    const res = await refund({ chargeId: charge.id, reason: "customer asked", metadata: { ticket: "T-1" } });
    expect(res.status, res.text).to.equal(201);
    expect(Object.keys(res.body).sort()).to.deep.equal(
      ["id", "object", "chargeId", "subscriptionId", "amount", "currency", "asset", "assetAmount", "status", "reason", "metadata", "createdAt"].sort(),
    );
    expect(res.body).to.deep.include({
      object: "refund",
      chargeId: charge.id,
      subscriptionId,
      amount: "10.5",
      currency: "USD",
      asset: "USDT_TRON",
      assetAmount: "10.5",
      status: "SUCCEEDED",
      reason: "customer asked",
      metadata: { ticket: "T-1" },
    });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("100");
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "10.5", assetAmountRefunded: "10.5" });

    const after = await subscriptionOf(api, subscriptionId);
    expect(after.status).to.equal(before.status);
    expect(after.nextBillingAt).to.equal(before.nextBillingAt);
    expect(after.currentPeriodEnd).to.equal(before.currentPeriodEnd);

    const got = await api.get(`/api/v1/refunds/${res.body.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(res.body);

    const [event] = await sys.sql<{ data: any }>("select data from events where type = 'subscription.charge_refunded' and data->'refund'->>'id' = ?", [
      res.body.id,
    ]);
    expect(event!.data.subscriptionId).to.equal(subscriptionId);
    expect(event!.data.refund).to.deep.equal(res.body);
    expect(event!.data.charge).to.include({ id: charge.id, amountRefunded: "10.5", assetAmountRefunded: "10.5", status: "SUCCEEDED" });

    const again = await refund({ chargeId: charge.id });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.equal("REFUND_EXCEEDS_CHARGE");
    expect(again.body.message).to.contain("0 USD remains");
  });

  it("BTC (8 decimals): partials convert at the charge's rate rounded down; the last returns exactly the rest", async () => {
    const { subscriptionId, user, charge } = await paidCharge({ plan: { amount: "10" }, credits: { BTC: "0.01" }, asset: "BTC" });
    expect(charge).to.include({ amount: "10", currency: "USD", asset: "BTC", assetAmount: "0.00016667", rate: "0.000016666666666667" });

    const first = await refund({ chargeId: charge.id, amount: "2.50" });
    expect(first.status, first.text).to.equal(201);
    // 2.5 × 0.000016666666666667 = 0.0000416666666666675 → rounded down to 8 decimals.
    expect(first.body).to.include({ amount: "2.5", assetAmount: "0.00004166" });
    const second = await refund({ chargeId: charge.id, amount: "2.5" });
    expect(second.body).to.include({ amount: "2.5", assetAmount: "0.00004166" });

    const tooMuch = await refund({ chargeId: charge.id, amount: "5.01" });
    expect(tooMuch.status).to.equal(409);
    expect(tooMuch.body.error).to.equal("REFUND_EXCEEDS_CHARGE");
    expect(tooMuch.body.message).to.contain("5 USD");

    const last = await refund({ chargeId: charge.id, amount: "5" });
    expect(last.status, last.text).to.equal(201);
    // 0.00016667 − 2 × 0.00004166, not 5 × rate rounded down (0.00008333).
    expect(last.body).to.include({ amount: "5", assetAmount: "0.00008335" });
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "10", assetAmountRefunded: "0.00016667" });
    expect((await balances(sys, user.id)).BTC).to.equal("0.01");

    const list = await api.get(`/api/v1/refunds?chargeId=${charge.id}`);
    expect(list.body.data.map((r: any) => r.id)).to.deep.equal([last.body.id, second.body.id, first.body.id]);
  });

  it("ETH (18 decimals): nine partials and a default-amount last refund add up to exactly the asset amount", async () => {
    const { subscriptionId, charge } = await paidCharge({ plan: { amount: "10" }, credits: { ETH: "1" }, asset: "ETH" });
    expect(charge).to.include({ assetAmount: "0.003333333333333334", rate: "0.000333333333333333" });
    let total = zero();
    for (let i = 0; i < 9; i++) {
      const res = await refund({ chargeId: charge.id, amount: "1" });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.assetAmount).to.equal(formatAmount(convert(amount("1"), charge.rate, 18, "down")));
      total = add(total, amount(res.body.assetAmount));
    }
    const last = await refund({ chargeId: charge.id });
    expect(last.status, last.text).to.equal(201);
    expect(last.body).to.include({ amount: "1", assetAmount: "0.000333333333333337" });
    expect(formatAmount(add(total, amount(last.body.assetAmount)))).to.equal("0.003333333333333334");
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "10", assetAmountRefunded: "0.003333333333333334" });
  });

  it("a near-total partial never returns more than the charge took in the asset (recorded rate above the exact one)", async () => {
    // 600,000,000,000 USD at 60,000 USD/BTC is exactly 10,000,000 BTC; the recorded rate 0.000016666666666667 is a
    // little above 1/60,000, so 599,999,999,999.99 USD × rate rounds down to 10,000,000.00000003 BTC.
    const plan = { amount: "600000000000" };
    const { subscriptionId, user, charge } = await paidCharge({ plan, credits: { BTC: "10000000" }, asset: "BTC" });
    expect(charge).to.include({ assetAmount: "10000000", rate: "0.000016666666666667" });
    // Another customer's charge gives the merchant more BTC than this charge: the wallet alone would not refuse the excess.
    await paidCharge({ plan, credits: { BTC: "10000000" }, asset: "BTC" });

    const res = await refund({ chargeId: charge.id, amount: "599999999999.99" });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ amount: "599999999999.99", assetAmount: "10000000", status: "SUCCEEDED" });
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "599999999999.99", assetAmountRefunded: "10000000" });
    expect((await balances(sys, user.id)).BTC).to.equal("10000000");
    const [pending] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_refunds where charge_id = ? and status = 'PENDING'", [
      charge.id,
    ]);
    expect(pending!.n).to.equal(0);

    // The 0.01 USD left in the currency is worth nothing that remains in the asset.
    const rest = await refund({ chargeId: charge.id });
    expect(rest.status).to.equal(409);
    expect(rest.body.error).to.equal("REFUND_EXCEEDS_CHARGE");
    expect(rest.body.message).to.contain("whole asset amount (10000000 BTC)");
    expect((await ledgerCheck()).ok).to.equal(true);
  });

  it("a plan change's immediate charge is refundable like any charge", async () => {
    const { subscriptionId, user } = await paidCharge({ plan: { amount: "5" }, credits: { USDT_TRON: "50" } });
    const pro = await api.post("/api/v1/subscription-plans", { name: "Pro+", amount: "9", currency: "USD", interval: "MONTH" });
    const change = await createChange(api, subscriptionId, pro.body.id, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "4" });
    const approved = await client.approveChangeSession({ token: tokenOf(change.approvalUrl), walletUserId: user.id });
    expect(approved.approved).to.equal(true);
    const [row] = await sys.sql<{ id: string }>("select id from subscription_charges where change_session_id = ? and status = 'SUCCEEDED'", [change.id]);
    const res = await refund({ chargeId: row!.id, amount: "1.5" });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ amount: "1.5", assetAmount: "1.5", subscriptionId });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("42.5");
    expect((await subscriptionOf(api, subscriptionId)).planId).to.equal(pro.body.id);
  });

  it("errors: unknown or another merchant's charge 404 CHARGE_NOT_FOUND; a FAILED charge 409 CHARGE_NOT_REFUNDABLE; bad input 400 naming the field", async () => {
    const { charge } = await paidCharge({ plan: { amount: "5" } });
    const other = await sys.createMerchant("Other");

    const unknown = await refund({ chargeId: "00000000-0000-4000-8000-000000000000" });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.equal("CHARGE_NOT_FOUND");
    const foreign = await refund({ chargeId: charge.id }, undefined, other.api);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error).to.equal("CHARGE_NOT_FOUND");
    const foreignGet = await other.api.get(`/api/v1/refunds?chargeId=${charge.id}`);
    expect(foreignGet.body.data).to.deep.equal([]);

    // An approval refused for funds leaves a FAILED charge attempt.
    const poor = await createWalletUser(sys, { USDT_TRON: "1" });
    const planRes = await api.post("/api/v1/subscription-plans", { name: "Big", amount: "50", currency: "USD", interval: "MONTH" });
    const subRes = await api.post("/api/v1/subscriptions", {
      externalReference: `ext-failed-${Date.now()}`,
      planId: planRes.body.id,
      walletUserId: poor.id,
      successUrl: "https://merchant.example/s",
      cancelUrl: "https://merchant.example/c",
    });
    const token = new URL(subRes.body.authorizationUrl).pathname.split("/").pop()!;
    await client.approveAuthorization({ token, walletUserId: poor.id, fundingAsset: "USDT_TRON" });
    const [failed] = await sys.sql<{ id: string }>("select id from subscription_charges where subscription_id = ? and status = 'FAILED'", [
      subRes.body.subscriptionId,
    ]);
    const notRefundable = await refund({ chargeId: failed!.id });
    expect(notRefundable.status).to.equal(409);
    expect(notRefundable.body.error).to.equal("CHARGE_NOT_REFUNDABLE");

    for (const [body, field] of [
      [{ chargeId: charge.id, amount: "0" }, "amount"],
      [{ chargeId: charge.id, amount: "-1" }, "amount"],
      [{ chargeId: charge.id, amount: 1 }, "amount"],
      [{ chargeId: "not-a-uuid" }, "chargeId"],
      [{}, "chargeId"],
      [{ chargeId: charge.id, reason: "x".repeat(501) }, "reason"],
      [{ chargeId: charge.id, surprise: true }, "surprise"],
    ] as const) {
      const res = await refund(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.contain(field);
    }
    const missing = await api.get("/api/v1/refunds/00000000-0000-4000-8000-000000000000");
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.equal("REFUND_NOT_FOUND");
  });

  it("an amount worth less than one unit of the asset is a 400 naming amount", async () => {
    const { charge } = await paidCharge({ plan: { amount: "10" }, credits: { BTC: "0.01" }, asset: "BTC" });
    const res = await refund({ chargeId: charge.id, amount: "0.0001" });
    expect(res.status).to.equal(400);
    expect(res.body.message).to.match(/^amount: .*smallest unit of BTC/);
  });

  it("merchant balance too low: 409 MERCHANT_BALANCE_INSUFFICIENT and nothing moves", async () => {
    const poorMerchant = await sys.createMerchant("Spent");
    const { subscriptionId, user, charge } = await paidCharge({ plan: { amount: "8" }, credits: { USDT_TRON: "20" }, on: poorMerchant.api });
    // What a payout will do one day: money leaves the merchant's account (here straight through the ledger).
    const ctx = sys.context();
    await ctx.em.transactional(async (em) => {
      const merchantAccount = await openAccount(em, ctx.clock, { type: "MERCHANT", id: poorMerchant.id }, "USDT_TRON");
      const outside = await openAccount(em, ctx.clock, { type: "SYSTEM", code: "PAYMENT_RECEIPTS" }, "USDT_TRON");
      const accounts = await lockAccounts(em, [merchantAccount, outside]);
      await postTransactions(em, ctx.clock, accounts, [
        {
          kind: "MERCHANT_CREDIT",
          asset: "USDT_TRON",
          amount: amount("5"),
          idempotencyKey: null,
          walletUserId: null,
          merchantId: poorMerchant.id,
          description: "test: simulated payout",
          legs: [
            { accountId: merchantAccount, amount: sub(zero(), amount("5")) },
            { accountId: outside, amount: amount("5") },
          ],
        },
      ]);
    });
    expect((await merchantBalance(poorMerchant.api)).USDT_TRON).to.equal("3");

    const res = await refund({ chargeId: charge.id, amount: "4" }, { "idempotency-key": "spent-1" }, poorMerchant.api);
    expect(res.status, res.text).to.equal(409);
    expect(res.body.error).to.equal("MERCHANT_BALANCE_INSUFFICIENT");
    expect((await merchantBalance(poorMerchant.api)).USDT_TRON).to.equal("3");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("12");
    expect(await chargeOf(subscriptionId, charge.id, poorMerchant.api)).to.include({ amountRefunded: "0", assetAmountRefunded: "0" });
    expect((await poorMerchant.api.get("/api/v1/refunds")).body.data).to.deep.equal([]);

    // What the balance allows still works, and the reservation of the refused attempt is gone.
    const ok = await refund({ chargeId: charge.id, amount: "3" }, undefined, poorMerchant.api);
    expect(ok.status, ok.text).to.equal(201);
    expect((await merchantBalance(poorMerchant.api)).USDT_TRON).to.equal("0");
    expect((await ledgerCheck()).ok).to.equal(true);
  });

  it("a frozen customer still receives the refund", async () => {
    const { user, charge } = await paidCharge({ plan: { amount: "7" }, credits: { USDT_TRON: "10" } });
    expect((await sys.admin.post(`/admin/v1/wallet-users/${user.id}/freeze`)).status).to.equal(200);
    expect((await sys.admin.post(`/admin/v1/wallet-users/${user.id}/accounts/freeze`, { asset: "USDT_TRON" })).status).to.equal(200);
    const res = await refund({ chargeId: charge.id });
    expect(res.status, res.text).to.equal(201);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("10");
  });

  it("idempotent: the same Idempotency-Key returns the first refund and refunds once (gateway and service)", async () => {
    const { user, charge } = await paidCharge({ plan: { amount: "6" }, credits: { USDT_TRON: "6" } });
    const first = await refund({ chargeId: charge.id, amount: "1" }, { "idempotency-key": "refund-key-1" });
    const replay = await refund({ chargeId: charge.id, amount: "1" }, { "idempotency-key": "refund-key-1" });
    expect(first.status).to.equal(201);
    expect(replay.status).to.equal(201);
    expect(replay.body).to.deep.equal(first.body);
    const reused = await refund({ chargeId: charge.id, amount: "2" }, { "idempotency-key": "refund-key-1" });
    expect(reused.status).to.equal(409);
    expect(reused.body.error).to.equal("IDEMPOTENCY_KEY_REUSED");

    // Behind the gateway (its Redis cache lost the key): the database still answers with the first refund.
    const refunds = internal.client(RefundsService, sys.config.serviceUrls.subscriptions);
    const direct = await refunds.createRefund({
      merchantId: merchant.id,
      chargeId: charge.id,
      amount: "1",
      metadataJson: "{}",
      idempotencyKey: "refund-key-1",
    });
    expect(direct.refund!.id).to.equal(first.body.id);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("1");
  });

  it("20 parallel partial refunds summing to more than the charge: the total refunded is exactly the charge, never more", async () => {
    const { subscriptionId, user, charge } = await paidCharge({ plan: { amount: "10.50" }, credits: { USDT_TRON: "10.50" } });
    const results = await Promise.all(Array.from({ length: 20 }, () => refund({ chargeId: charge.id, amount: "0.75" })));
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(ok).to.have.length(14);
    expect(
      refused.every((r) => r.status === 409 && r.body.error === "REFUND_EXCEEDS_CHARGE"),
      JSON.stringify(refused.map((r) => r.body)),
    ).to.equal(true);
    const total = ok.reduce((acc, r) => add(acc, amount(r.body.assetAmount)), zero());
    expect(formatAmount(total)).to.equal("10.5");
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "10.5", assetAmountRefunded: "10.5" });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("10.5");
    expect((await ledgerCheck()).ok).to.equal(true);
  });

  it("a refund is an ordinary credit for the customer: a PAST_DUE subscription it funds is retried at once", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "15" });
    // Sub A pays 10 now; sub B's trial ends a day later and its first charge fails (5 left): PAST_DUE.
    const a = await approvedSubscription(sys, api, client, { plan: { amount: "10" }, user });
    const b = await approvedSubscription(sys, api, client, { plan: { amount: "10", trialDays: 1 }, user });
    await advanceBy(sys, DAY + 120);
    await waitForStatus(api, b.subscriptionId, "PAST_DUE", 20_000);
    const chargeA = (await api.get(`/api/v1/subscriptions/${a.subscriptionId}/charges`)).body.data[0];

    const res = await refund({ chargeId: chargeA.id });
    expect(res.status, res.text).to.equal(201);
    // No clock move: only the top-up path can retry it now.
    await waitForStatus(api, b.subscriptionId, "ACTIVE", 20_000);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("5");
  });

  it("a holder stalled past its lease cannot settle over the one that took it next (fencing): one credit, SUCCEEDED", async () => {
    const { subscriptionId, user, charge } = await paidCharge({ plan: { amount: "4" }, credits: { USDT_TRON: "4" } });
    const id = "22222222-3333-4444-8555-666666666666";
    // Holder A opened the refund with lease generation 1 (a live lease keeps the sweep away).
    await make.refund(sys, { id, chargeId: charge.id, leaseSeconds: 60, leaseGeneration: 1 });
    // A stalls past its lease; B (the sweep, say) takes the next one: generation 2.
    await sys.sql("update subscription_refunds set lease_generation = 2, lease_until = now() + interval '60 seconds' where id = ?", [id]);
    const ports = subscriptionPorts({ rpc: internal, config: sys.config, queues: sys.system.queues!, logger: createLogger("silent") });
    const ctx = () => sys.context();

    // A wakes up: its wallet call goes through (key refund-<id>), but its commit is fenced off.
    expect((await settleRefund(ctx(), ports, id, 1)).state).to.equal("in_progress");
    const [stillPending] = await sys.sql<{ status: string }>("select status from subscription_refunds where id = ?", [id]);
    expect(stillPending!.status).to.equal("PENDING");
    // B settles with the same key: the wallet replays, the row becomes SUCCEEDED, the customer is credited once.
    expect((await settleRefund(ctx(), ports, id, 2)).state).to.equal("succeeded");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("1");
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "1", assetAmountRefunded: "1" });
  });

  it("a refund left PENDING by a crash is finished by the sweep, and the customer is credited once", async () => {
    const { subscriptionId, user, charge } = await paidCharge({ plan: { amount: "4" }, credits: { USDT_TRON: "4" } });
    const id = "11111111-2222-4333-8444-555555555555";
    await make.refund(sys, { id, chargeId: charge.id });
    // The crash came after the wallet moved the money.
    const wallet = internal.client(WalletService, sys.config.serviceUrls.wallet);
    const moved = await wallet.refund({ idempotencyKey: `refund-${id}`, merchantId: merchant.id, walletUserId: user.id, asset: "USDT_TRON", amount: "1" });
    expect(moved.outcome).to.equal(RefundOutcome.SUCCEEDED);

    await eventually(
      async () => {
        const [r] = await sys.sql<{ status: string }>("select status from subscription_refunds where id = ?", [id]);
        return r!.status === "SUCCEEDED" ? true : undefined;
      },
      10_000,
      "the sweep to settle the refund",
    );
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("1");
    expect(await chargeOf(subscriptionId, charge.id)).to.include({ amountRefunded: "1", assetAmountRefunded: "1" });
  });
});
