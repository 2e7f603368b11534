import { expect } from "chai";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../support/system.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { approvedSubscription } from "../support/billing.ts";

const TRON_ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";

/** Payouts and subscription refunds check one merchant balance under one lock: together they never overdraw it. */
describe("payouts racing subscription refunds on one merchant balance", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem({ env: { PAYOUT_DESTINATION_COOLDOWN_MINUTES: "0" } });
  before(async () => {
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  it("parallel POST /payouts and POST /refunds on a balance covering part of them: never below 0, every success accounted for, the rest 409 MERCHANT_BALANCE_INSUFFICIENT", async () => {
    const shop = await sys.createMerchant("Race shop");
    // Five customers each paid a 10 USDT_TRON first charge: the merchant's balance is 50.
    const charges: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = await approvedSubscription(sys, shop.api, client, { plan: { amount: "10" }, credits: { USDT_TRON: "100" } });
      const res = await shop.api.get(`/api/v1/subscriptions/${s.subscriptionId}/charges`);
      expect(res.body.data[0].status).to.equal("SUCCEEDED");
      charges.push(res.body.data[0].id);
    }
    const available = async () => {
      const res = await shop.api.get("/api/v1/balance");
      const map = (list: { asset: string; amount: string }[]) => Object.fromEntries(list.map((b) => [b.asset, Number(b.amount)]));
      return { available: map(res.body.available).USDT_TRON ?? 0, pending: map(res.body.pending).USDT_TRON ?? 0 };
    };
    expect(await available()).to.deep.equal({ available: 50, pending: 0 });
    const dest = await shop.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS });
    expect(dest.body.status, dest.text).to.equal("ACTIVE");

    // 5 full refunds of 10 and 8 payouts of 5 (+ 1 fee): 98 asked of 50, all at once, interleaved.
    const requests: { kind: "refund" | "payout"; send: () => Promise<{ status: number; body: any; text: string }> }[] = [];
    for (let i = 0; i < 8; i++) {
      requests.push({ kind: "payout", send: () => shop.api.post("/api/v1/payouts", { destinationId: dest.body.id, amount: "5" }) });
      if (i < 5) requests.push({ kind: "refund", send: () => shop.api.post("/api/v1/refunds", { chargeId: charges[i] }) });
    }
    const answers = await Promise.all(requests.map(async (r) => ({ kind: r.kind, res: await r.send() })));
    for (const { res } of answers) {
      if (res.status === 201) continue;
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error, res.text).to.equal("MERCHANT_BALANCE_INSUFFICIENT");
    }
    const ok = (kind: string) => answers.filter((a) => a.kind === kind && a.res.status === 201);
    const refunds = ok("refund");
    const payouts = ok("payout");
    const refused = answers.filter((a) => a.res.status === 409);
    expect(refused.length, answers.map((a) => `${a.kind}:${a.res.status}`).join()).to.be.greaterThan(0);
    // Every success is in the books: 10 per refund, 6 per payout, the rest still available, never below 0.
    const after = await available();
    expect(after.available).to.equal(50 - 10 * refunds.length - 6 * payouts.length);
    expect(after.available).to.be.at.least(0);
    expect(after.pending).to.equal(6 * payouts.length);
    // A refusal was right: once something was refused for want of balance, what is left is less than it asked.
    if (refused.some((a) => a.kind === "payout")) expect(after.available).to.be.below(6);
    if (refused.some((a) => a.kind === "refund")) expect(after.available).to.be.below(10);

    const moved = await sys.sql<{ kind: string; n: number }>(
      "select kind, count(*)::int as n from ledger_transactions where merchant_id = ? and kind in ('PAYOUT','REFUND') group by kind order by kind",
      [shop.id],
    );
    expect(moved.filter((m) => m.n > 0)).to.deep.equal(
      [
        { kind: "PAYOUT", n: payouts.length },
        { kind: "REFUND", n: refunds.length },
      ].filter((m) => m.n > 0),
    );
    const listed = await shop.api.get("/api/v1/payouts?limit=100");
    expect(listed.body.data.map((p: any) => p.id).sort()).to.deep.equal(payouts.map((p) => p.res.body.id).sort());
    const listedRefunds = await shop.api.get("/api/v1/refunds?limit=100");
    expect(listedRefunds.body.data.map((r: any) => r.id).sort()).to.deep.equal(refunds.map((r) => r.res.body.id).sort());

    const ledger = await sys.admin.get("/admin/v1/ledger/check");
    expect(ledger.body.ok, ledger.text).to.equal(true);
    const rec = await sys.admin.get("/admin/v1/reconciliation");
    expect(rec.body.status, rec.text).to.equal("ok");
  });
});
