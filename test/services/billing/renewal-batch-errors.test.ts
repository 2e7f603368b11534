import { expect } from "chai";
import { pino } from "pino";
import { renewBatchKind } from "../../../services/subscriptions/renewals/renewal-queue.ts";
import { claimDueRenewals } from "../../../services/subscriptions/renewals/find-due-renewals.ts";
import { handlersOf, useTestSystem } from "../../support/system.ts";
import { createPlan, subscriptionsRpc } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { advanceTo, approvedSubscription, chargesOf, subscriptionOf } from "../../support/billing.ts";
import { make } from "../../support/factories/index.ts";

/**
 * Issue 21 (6): a subscription whose renewal throws in a batch's one-by-one
 * pass failed the whole job, before the subscriptions after it were renewed;
 * the claims were kept, so the same set came back every claim period and
 * failed again. Now it fails alone: logged once, counted once, its claim
 * released with the others, and the rest of the set renewed in the same run.
 */
describe("recurring billing: one subscription that cannot be renewed does not fail its set", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  const logLines: Record<string, unknown>[] = [];

  const logger = pino({ level: "warn" }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
  // Only the batch job runs: the test claims and enqueues as the sweep does, then watches that one run.
  const sys = useTestSystem({ workerGroups: ["renewals"], jobs: handlersOf(renewBatchKind), logger });
  before(async () => {
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  it("the bad one is logged and counted once and released; the others, before and after it, are renewed by the same job", async () => {
    const { api } = await sys.createMerchant();
    const other = await sys.createMerchant();
    const plan = { amount: "4", interval: "DAY" };
    const plain = await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "8" } });
    // Two that take the one-by-one pass; the one iterated first (lower id: the set is locked in id order) is the bad one.
    const [bad, inFlight] = [
      await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "8" } }),
      await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "8" } }),
    ].sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : 1));
    // Its plan cannot be read any more: a row pointing at another merchant's plan (the catalog answers not found).
    const foreignPlan = await createPlan(other.api, plan);
    await sys.sql("update subscriptions set plan_id = ? where id = ?", [foreignPlan.id, bad!.subscriptionId]);
    const due = await subscriptionOf(api, plain.subscriptionId);
    await advanceTo(sys, new Date(Date.parse(due.nextBillingAt) + 60_000));
    // What a worker killed mid-charge leaves: a PENDING row of the due period whose lease ran out (renewed one by one).
    await make.charge(sys, { subscriptionId: inFlight!.subscriptionId, leaseSeconds: -1 });
    const ids = [plain, bad!, inFlight!].map((s) => s.subscriptionId);

    // Claimed and enqueued as the sweep does: one set, one job.
    const claimed = await claimDueRenewals(sys.context(), async (set) => {
      await sys.system.queues!.addBulk(renewBatchKind, [{ subscriptionIds: set.map((d) => d.subscriptionId) }]);
    });
    expect(claimed).to.equal(3);
    const runs = async () => {
      const { values } = await sys.system.metrics!.jobDuration.get();
      const count = (outcome: string) =>
        values.find((v) => v.metricName?.endsWith("_count") && v.labels.job_name === renewBatchKind.name && v.labels.outcome === outcome)?.value ?? 0;
      return { completed: count("completed"), failed: count("failed") };
    };
    const ran = await eventually(
      async () => {
        const r = await runs();
        return r.completed + r.failed > 0 ? r : undefined;
      },
      20_000,
      "the renewal job to end",
    );
    expect(ran).to.deep.equal({ completed: 1, failed: 0 });

    // The others are renewed in that run: the plain one in the set step, the in-flight one one by one after the bad one.
    expect((await chargesOf(sys, plain.subscriptionId)).map((c) => [c.period_index, c.status])).to.deep.equal([
      [0, "SUCCEEDED"],
      [1, "SUCCEEDED"],
    ]);
    expect((await chargesOf(sys, inFlight!.subscriptionId)).map((c) => [c.period_index, c.status])).to.deep.equal([
      [0, "SUCCEEDED"],
      [1, "SUCCEEDED"],
    ]);
    expect((await chargesOf(sys, bad!.subscriptionId)).map((c) => [c.period_index, c.status])).to.deep.equal([[0, "SUCCEEDED"]]);
    expect(await subscriptionOf(api, bad!.subscriptionId)).to.include({ status: "ACTIVE" });

    // Logged once (error, with its id), counted once.
    const aboutBad = logLines.filter((l) => JSON.stringify(l).includes(bad!.subscriptionId));
    expect(aboutBad.map((l) => [l.level, l.msg])).to.deep.equal([[50, "renewal failed; the rest of its set is renewed"]]);
    const errors = (await sys.system.metrics!.renewalErrors.get()).values;
    expect(errors.map((v) => v.value)).to.deep.equal([1]);
    // Every claim of the set released: the next sweep may take the bad one again (and the others when next due).
    const claims = await sys.sql<{ renewal_claimed_until: Date | null }>(`select renewal_claimed_until from subscriptions where id in (?, ?, ?)`, ids);
    expect(claims.map((c) => c.renewal_claimed_until)).to.deep.equal([null, null, null]);
  });
});
