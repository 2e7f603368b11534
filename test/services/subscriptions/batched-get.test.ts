import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createPlan, createSubscription, createWalletUser } from "../../support/subscriptions.ts";
import { getSubscription } from "../../../services/subscriptions/get-subscription.ts";
import { DomainError } from "../../../services/platform/errors.ts";
import { poolOf } from "../../../services/platform/database/prepared.ts";
import { MAX_BATCH } from "../../../services/platform/database/batched-reads.ts";
import { getPlan } from "../../../services/catalog/get-plan.ts";
import { getWalletUser } from "../../../services/wallet/get-wallet-user.ts";

describe("GET subscription: the reads of one event-loop turn share one statement", () => {
  const merchants: { id: string; subs: string[]; api: ApiClient; planId: string }[] = [];
  let userId = "";

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    const user = await createWalletUser(sys);
    userId = user.id;
    for (const name of ["A", "B"]) {
      const { id, api } = await sys.createMerchant(name);
      const plan = await createPlan(api);
      const subs: string[] = [];
      for (let i = 0; i < 3; i++) subs.push((await createSubscription(api, plan.id, user.id)).subscriptionId);
      merchants.push({ id, subs, api, planId: plan.id });
    }
  });

  /** Counts the executions of the batched statement on the system's own pool while `work` runs. */
  async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; executions: number; largest: number }> {
    const pool = await poolOf(sys.context().em);
    const original = pool.query;
    let executions = 0;
    let largest = 0;
    pool.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
      const c = config as { name?: string; values?: unknown[][] };
      if (c?.name === "subscriptions.find_with_authorization") {
        executions++;
        largest = Math.max(largest, c.values![0]!.length);
      }
      return (original as (...a: unknown[]) => unknown).call(this, config, ...rest);
    } as typeof pool.query;
    try {
      return { result: await work(), executions, largest };
    } finally {
      pool.query = original;
    }
  }

  const outcome = (p: Promise<{ subscription: { id: string; merchantId: string } }>) =>
    p.then(
      (r) => ({ id: r.subscription.id, merchantId: r.subscription.merchantId }),
      (err: unknown) => (err instanceof DomainError ? err.code : err),
    );

  it("answers each caller its own record, and another merchant's id as missing, even inside one batch", async () => {
    const [a, b] = [merchants[0]!, merchants[1]!];
    const asks: [string, string][] = [
      ...a.subs.map((s) => [a.id, s] as [string, string]),
      ...b.subs.map((s) => [b.id, s] as [string, string]),
      [a.id, b.subs[0]!], // B's subscription asked by A
      [b.id, a.subs[1]!], // and the other way round
      [a.id, "00000000-0000-4000-8000-000000000000"], // nobody's
      [a.id, a.subs[0]!], // the same key twice in one batch
      [a.id.toUpperCase(), a.subs[2]!.toUpperCase()], // a uuid in upper case is the same uuid
    ];
    const { result, executions } = await statementsDuring(() =>
      Promise.all(asks.map(([merchantId, id]) => outcome(getSubscription(sys.context(), merchantId, id)))),
    );
    expect(result).to.deep.equal([
      ...a.subs.map((id) => ({ id, merchantId: a.id })),
      ...b.subs.map((id) => ({ id, merchantId: b.id })),
      "SUBSCRIPTION_NOT_FOUND",
      "SUBSCRIPTION_NOT_FOUND",
      "SUBSCRIPTION_NOT_FOUND",
      { id: a.subs[0], merchantId: a.id },
      { id: a.subs[2], merchantId: a.id },
    ]);
    expect(executions, "one statement for the turn's reads").to.equal(1);
  });

  it("splits a turn's reads into batches of at most MAX_BATCH keys, each caller still answered", async () => {
    const a = merchants[0]!;
    const count = MAX_BATCH * 2 + 5;
    const { result, executions, largest } = await statementsDuring(() =>
      Promise.all(Array.from({ length: count }, (_, i) => outcome(getSubscription(sys.context(), a.id, a.subs[i % a.subs.length]!)))),
    );
    expect(result.every((r, i) => (r as { id: string }).id === a.subs[i % a.subs.length])).to.equal(true);
    expect(executions).to.equal(3);
    expect(largest).to.equal(MAX_BATCH);
  });

  it("refuses to read inside an ORM transaction, whose writes the pooled read would not see", async () => {
    const a = merchants[0]!;
    const ctx = sys.context();
    const refused = await ctx.em
      .fork()
      .transactional((em) => getSubscription({ ...ctx, em }, a.id, a.subs[0]!))
      .catch((err: Error) => err);
    expect((refused as Error).message).to.match(/inside an ORM transaction/);
  });

  it("reads afresh every time (no cache between turns): a change is seen by the next read", async () => {
    const a = merchants[0]!;
    const before = await getSubscription(sys.context(), a.id, a.subs[2]!);
    const res = await a.api.post(`/api/v1/subscriptions/${a.subs[2]}/cancel`, {});
    expect(res.status, res.text).to.equal(200);
    const after = await getSubscription(sys.context(), a.id, a.subs[2]!);
    expect([before.subscription.status, after.subscription.status]).to.deep.equal(["PENDING_APPROVAL", "CANCELLED"]);
  });

  it("reads plans and wallet users the same way: upper-case ids found, another merchant's plan missing, inside one batch", async () => {
    const [a, b] = [merchants[0]!, merchants[1]!];
    const ctx = sys.context();
    const code = (err: unknown) => (err instanceof DomainError ? err.code : err);
    const [plans, users] = await Promise.all([
      Promise.all([
        getPlan(ctx, a.id, a.planId).then((p) => p.id),
        getPlan(ctx, a.id.toUpperCase(), a.planId.toUpperCase()).then((p) => p.id),
        getPlan(ctx, a.id, b.planId).catch(code),
      ]),
      Promise.all([getWalletUser(ctx, userId).then((u) => u.id), getWalletUser(ctx, userId.toUpperCase()).then((u) => u.id)]),
    ]);
    expect(plans).to.deep.equal([a.planId, a.planId, "PLAN_NOT_FOUND"]);
    expect(users).to.deep.equal([userId, userId]);
    const created = await a.api.post("/api/v1/subscriptions", {
      externalReference: `upper-${Date.now()}`,
      planId: a.planId.toUpperCase(),
      walletUserId: userId.toUpperCase(),
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    });
    expect(created.status, created.text).to.equal(201);
    const got = await a.api.get(`/api/v1/subscriptions/${String(created.body.subscriptionId).toUpperCase()}`);
    expect(got.status, got.text).to.equal(200);
    expect(got.body.id).to.equal(created.body.subscriptionId);
  });
});
