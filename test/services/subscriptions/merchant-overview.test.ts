import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ApprovalOutcome } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";

/**
 * GetMerchantOverview (issue 24's Overview): validated and merchant-scoped
 * like every RPC; MRR normalizes every interval exactly (a daily and a
 * 3-yearly plan here: the browser test covers month, year and week); the
 * chart has every day of the window; subscriptions and searches of
 * ListSubscriptions.query stay within the merchant.
 */
describe("subscriptions service: GetMerchantOverview and the search query", function () {
  this.timeout(120_000);
  let rpc: ReturnType<typeof subscriptionsRpc>;

  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  async function approve(api: Parameters<typeof createSubscription>[0], planId: string, email?: string) {
    const user = await createWalletUser(sys, { USDT_TRON: "5000" });
    const s = await createSubscription(api, planId, user.id, email ? { customerEmail: user.email } : {});
    const res = await rpc.client.approveAuthorization({ token: tokenOf(s.authorizationUrl), walletUserId: user.id, fundingAsset: "USDT_TRON" });
    expect(res.outcome).to.equal(ApprovalOutcome.APPROVED);
    return { id: s.subscriptionId, email: user.email };
  }

  it("normalizes daily and multi-year plans exactly, counts charges, and lists every day of the window", async () => {
    const m = await sys.createMerchant("Daily Co");
    const daily = await createPlan(m.api, { name: "Daily", amount: "1", currency: "USD", interval: "DAY" });
    const triennial = await createPlan(m.api, { name: "Triennial", amount: "1000", currency: "USD", interval: "YEAR", intervalCount: 3 });
    await approve(m.api, daily.id);
    await approve(m.api, triennial.id);
    const o = await rpc.client.getMerchantOverview({ merchantId: m.id });
    // 1 × 365/12 + 1000 / 36 = 30.41666… + 27.77777… = 58.19444… → 58.19.
    expect(o.mrr.map((x) => ({ currency: x.currency, amount: x.amount, subscriptions: x.subscriptions }))).to.deep.equal([
      { currency: "USD", amount: "58.19", subscriptions: 2 },
    ]);
    expect(o).to.include({ activeSubscriptions: 2, chargesSucceeded: 2, chargesFailed: 0 });
    const days = o.chargedVolume.filter((d) => d.currency === "USD");
    expect(days.length).to.be.within(30, 31);
    expect(days.map((d) => d.date)).to.deep.equal([...days.map((d) => d.date)].sort());
    expect(days.at(-1)).to.include({ amount: "1001", charges: 2 });
    expect(days.filter((d) => d.amount !== "0")).to.have.length(1);
    expect(timestampDate(o.windowEnd!).getTime() - timestampDate(o.windowStart!).getTime()).to.equal(30 * 86_400_000);
    expect((await rpc.client.getMerchantOverview({ merchantId: m.id, days: 7 })).chargedVolume.length).to.be.within(7, 8);

    // Another merchant sees none of it.
    const other = await sys.createMerchant("Other Co");
    const empty = await rpc.client.getMerchantOverview({ merchantId: other.id });
    expect(empty).to.include({ activeSubscriptions: 0, chargesSucceeded: 0, chargesFailed: 0 });
    expect(empty.mrr).to.deep.equal([]);
    expect(empty.chargedVolume).to.deep.equal([]);
  });

  it("refuses a merchant id that is not a uuid and a window out of range, naming the field", async () => {
    const m = await sys.createMerchant("Window Co");
    for (const [req, field] of [
      [{ merchantId: "not-a-uuid" }, "merchantId"],
      [{ merchantId: m.id, days: 91 }, "days"],
      [{ merchantId: m.id, days: -1 }, "days"],
    ] as const) {
      const err = await rpc.client.getMerchantOverview(req).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, field).to.be.instanceOf(ConnectError);
      expect((err as ConnectError).code, field).to.equal(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage, field).to.match(new RegExp(`^${field}: `));
    }
  });

  it("ListSubscriptions.query finds by id, externalReference or email (any case) within the merchant only", async () => {
    const m = await sys.createMerchant("Search Co");
    const plan = await createPlan(m.api);
    const mine = await approve(m.api, plan.id, "yes");
    const [row] = await sys.sql(`select external_reference from subscriptions where id = ?`, [mine.id]);
    const other = await sys.createMerchant("Elsewhere Co");
    const otherPlan = await createPlan(other.api);
    const theirs = await approve(other.api, otherPlan.id, "yes");
    const ids = async (merchantId: string, query: string) => (await rpc.client.listSubscriptions({ merchantId, query })).subscriptions.map((s) => s.id);
    expect(await ids(m.id, mine.id)).to.deep.equal([mine.id]);
    expect(await ids(m.id, mine.id.toUpperCase())).to.deep.equal([mine.id]);
    expect(await ids(m.id, row.external_reference)).to.deep.equal([mine.id]);
    expect(await ids(m.id, ` ${mine.email.toUpperCase()} `)).to.deep.equal([mine.id]);
    expect(await ids(m.id, theirs.id)).to.deep.equal([]);
    expect(await ids(m.id, theirs.email)).to.deep.equal([]);
    expect(await ids(m.id, "nothing-like-it")).to.deep.equal([]);
    const err = await rpc.client.listSubscriptions({ merchantId: m.id, query: "x".repeat(255) }).catch((e: unknown) => e);
    expect((err as ConnectError).code).to.equal(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).to.match(/^query: /);
  });
});
