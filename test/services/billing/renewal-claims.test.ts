import { expect } from "chai";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import {
  claimDueRenewals,
  claimNextRenewals,
  handOnSlots,
  heldRenewalClaims,
  releaseClaimsOfLostJobs,
  releaseRenewalClaims,
  renewalSets,
  type DueRenewal,
} from "../../../services/subscriptions/renewals/find-due-renewals.ts";
import { claimDueSubscriptions, countLiveRenewalClaims } from "../../../services/subscriptions/renewals/renewal-store.ts";
import { renewBatchKind, renewalsSweep } from "../../../services/subscriptions/renewals/renewal-queue.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import type { JobDeps, JobHandler, SweepHandler } from "../../../services/platform/queue/define-job.ts";
import { handlersOf, type TestSystem, useTestSystem } from "../../support/system.ts";
import { createWalletUser, subscriptionsRpc } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { advanceBy, approvedSubscription, chargesOf, DAY, serviceNow, waitForQuiet } from "../../support/billing.ts";

const claimsOf = (sys: TestSystem, ids: string[]) =>
  sys.sql<{ id: string; until: Date | null }>(
    `select id, renewal_claimed_until as until from subscriptions where id in (${ids.map(() => "?").join(", ")}) order by id`,
    ids,
  );

/** What a job handler gets, for a handler the test runs itself (as the watchdog runs a sweep in its process). */
const jobDeps = (sys: TestSystem, rpc: RpcClients): JobDeps => ({
  orm: sys.system.orm!,
  clock: sys.system.clock!.clock,
  config: sys.config,
  logger: createLogger("silent"),
  queues: sys.system.queues!,
  rpc,
});

/** Three daily subscriptions of one payer, approved, then due: the clock a day on. */
async function threeDue(sys: TestSystem, rpc: ReturnType<typeof subscriptionsRpc>): Promise<string[]> {
  const { api } = await sys.createMerchant();
  const user = await createWalletUser(sys, { USDT_TRON: "100" });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await approvedSubscription(sys, api, rpc.client, { plan: { amount: "1", interval: "DAY" }, user })).subscriptionId);
  await advanceBy(sys, DAY + 60);
  return ids;
}

/** The renewal sweep's claims (issues 15 and 21): each due subscription claimed once, a live claim never taken again. */
describe("renewal sweep: claims", () => {
  describe("bounded by the live claims", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;

    const sys = useTestSystem({ workerGroups: [] });
    before(async () => {
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("claims each due subscription once, never a live claim, and only up to the look-ahead counted in live claims", async () => {
      const ids = await threeDue(sys, rpc);
      const enqueued: DueRenewal[] = [];
      const claim = (lookahead: number) => claimDueRenewals(sys.context(), async (due) => void enqueued.push(...due), lookahead);

      // Room for two: two are claimed; the two live claims then fill the look-ahead.
      expect(await claim(2)).to.equal(2);
      expect(await claim(2)).to.equal(0);
      // More room: only the third; the live claims are not taken again, whatever the room.
      expect(await claim(100)).to.equal(1);
      expect(await claim(100)).to.equal(0);
      expect(enqueued.map((d) => d.subscriptionId).sort()).to.deep.equal([...ids].sort());
      // A claim that ran out (its job lost) is taken again.
      await sys.sql("update subscriptions set renewal_claimed_until = now() - interval '1 second' where id = ?", [ids[0]]);
      expect(await claim(100)).to.equal(1);
      expect(enqueued.at(-1)!.subscriptionId).to.equal(ids[0]);
    });

    it("after Redis lost its data, the claims taken before are released once and claimed again at once", async () => {
      const { api } = await sys.createMerchant();
      const user = await createWalletUser(sys, { USDT_TRON: "100" });
      // The previous test's subscriptions are due too: the claims here are counted, not listed.
      for (let i = 0; i < 2; i++) await approvedSubscription(sys, api, rpc.client, { plan: { amount: "1", interval: "DAY" }, user });
      await advanceBy(sys, DAY + 60);
      const logger = createLogger("silent");
      const release = () => releaseClaimsOfLostJobs(sys.context(), sys.system.queues!, logger);
      const claim = () => claimDueRenewals(sys.context(), async () => {});

      await release(); // the first call sets the marker (and may hand back the claims of the test before)
      const claimed = await claim();
      expect(claimed).to.be.greaterThan(0);
      // Redis keeps its data: nothing is released, the live claims stay.
      expect(await release()).to.equal(0);
      expect(await claim()).to.equal(0);
      // Redis loses this system's data (its own prefix only: the server is shared).
      const redis = sys.system.queues!.connection;
      const keys = await redis.keys(`${sys.system.queues!.prefix}:*`);
      expect(keys.length).to.be.greaterThan(0);
      await redis.del(...keys);
      expect(await release()).to.equal(claimed);
      // Their claims' counts go with them: the sweep finds its whole look-ahead free.
      expect(await countLiveRenewalClaims(sys.context().em)).to.equal(0);
      expect(await release()).to.equal(0);
      expect(await claim()).to.equal(claimed);
    });
  });

  /**
   * Issue 21 (10): the sweep counted the renewals queue's active jobs minus
   * one (itself), so when the watchdog ran it in its own process one running
   * batch read as "nothing queued", and the live claims were taken again as
   * orphans: the running batch's subscriptions went into a second batch.
   */
  describe("while a batch runs, the sweep run in the watchdog's process", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    let clients: RpcClients;
    let sweep: () => Promise<void>;

    // Only the batch job runs, one at a time: a second batch waits in the queue, where the test can read it.
    const sys = useTestSystem({ workerGroups: ["renewals"], jobs: handlersOf(renewBatchKind), env: { WORKER_CONCURRENCY: "1", CHARGE_NOTICE_DAYS: "0" } });
    before(async () => {
      rpc = subscriptionsRpc(sys);
      clients = new RpcClients(sys.config.internalApiToken);
      const deps = jobDeps(sys, clients);
      // What the watchdog does when the sweep's scheduler is missing or stuck (workers/sweep-watchdog.ts): the handler, in its process.
      const handler = handlersOf(renewalsSweep)[0] as SweepHandler;
      sweep = () => handler.handle(deps);
    });
    after(async () => {
      clients?.close();
      rpc?.close();
    });

    it("claims only what is not claimed: the running batch's subscriptions are not claimed or enqueued again", async () => {
      const { api } = await sys.createMerchant();
      const plan = { amount: "1", interval: "DAY" };
      const payer = await createWalletUser(sys, { USDT_TRON: "100" });
      const running = [
        (await approvedSubscription(sys, api, rpc.client, { plan, user: payer })).subscriptionId,
        (await approvedSubscription(sys, api, rpc.client, { plan, user: payer })).subscriptionId,
      ].sort();
      const later = (await approvedSubscription(sys, api, rpc.client, { plan, credits: { USDT_TRON: "100" } })).subscriptionId;
      await sweep(); // nothing due yet (and Redis's marker is set)
      await advanceBy(sys, DAY + 60);

      const db = new pg.Client({ connectionString: sys.config.databaseUrl });
      await db.connect();
      try {
        await db.query("begin");
        // The wallet's ChargeBatch waits for the payer's accounts: the batch stays running, its claims live.
        await db.query("select id from ledger_accounts where owner_type = 'WALLET_USER' and owner_id = $1 for update", [payer.id]);
        // `later` is locked now, so this sweep skips it; the next one finds it due and unclaimed.
        const skip = new pg.Client({ connectionString: sys.config.databaseUrl });
        await skip.connect();
        await skip.query("begin");
        await skip.query("select id from subscriptions where id = $1 for update", [later]);
        await sweep();
        await skip.query("commit");
        await skip.end();

        // The batch opened its charges and waits on the wallet: a job is active, none waits.
        await eventually(
          async () =>
            (await db.query("select count(*)::int as n from subscription_charges where status = 'PENDING' and subscription_id = any($1)", [running])).rows[0]
              .n === 2
              ? true
              : undefined,
          10_000,
          "the batch to open its charges",
        );
        const queue = sys.system.queues!.queue("renewals");
        expect(await queue.getJobCounts("active", "waiting")).to.deep.equal({ active: 1, waiting: 0 });
        const claimsBefore = await claimsOf(sys, running);
        expect(claimsBefore.every((c) => c.until !== null)).to.equal(true);

        await sweep();

        // The running batch's claims are untouched; the one new set holds only the subscription nobody had claimed.
        expect(await claimsOf(sys, running)).to.deep.equal(claimsBefore);
        const waiting = await queue.getJobs(["waiting"]);
        expect(waiting.map((j) => [j.name, j.data.subscriptionIds])).to.deep.equal([[renewBatchKind.name, [later]]]);
        expect((await claimsOf(sys, [later]))[0]!.until).to.not.equal(null);
      } finally {
        await db.query("rollback").catch(() => {});
        await db.end();
      }

      // Let go, everything is renewed once, and every claim released.
      await waitForQuiet(sys);
      for (const id of [...running, later])
        expect((await chargesOf(sys, id)).map((c) => [c.period_index, c.status])).to.deep.equal([
          [0, "SUCCEEDED"],
          [1, "SUCCEEDED"],
        ]);
      await eventually(async () => ((await claimsOf(sys, [...running, later])).every((c) => c.until === null) ? true : undefined), 10_000, "claims released");
    });
  });

  describe("a finished job's slots, and the order's index", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ workerGroups: [] });
    before(() => {
      rpc = subscriptionsRpc(sys);
    });
    after(() => rpc?.close());

    it("a job that ran through claims as many as it released, without counting the live claims", async () => {
      const ids = await threeDue(sys, rpc);
      const enqueued: DueRenewal[] = [];
      const enqueue = async (due: DueRenewal[]) => void enqueued.push(...due);

      expect(await claimDueRenewals(sys.context(), enqueue, 2)).to.equal(2);
      // The sweep, counting, finds the look-ahead full; a job's slots are claimed all the same.
      expect(await claimDueRenewals(sys.context(), enqueue, 2)).to.equal(0);
      expect(await claimNextRenewals(sys.context(), enqueue, 2)).to.equal(1);
      // Never a live claim, whatever the slots.
      expect(await claimNextRenewals(sys.context(), enqueue, 2)).to.equal(0);
      expect(enqueued.map((d) => d.subscriptionId).sort()).to.deep.equal([...ids].sort());
    });

    it("counts a live claim whose subscription is no longer due; a release ends the live claims once", async () => {
      await threeDue(sys, rpc);
      // The earlier tests' claims are live still: room is counted above them.
      const live = async () => (await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where renewal_claimed_until >= now()"))[0]!.n;
      const enqueued: DueRenewal[] = [];
      const enqueue = async (due: DueRenewal[]) => void enqueued.push(...due);
      expect(await claimDueRenewals(sys.context(), enqueue, (await live()) + 2)).to.equal(2);
      const claimed = enqueued.map((d) => d.subscriptionId);
      // As a job's settle leaves its rows: renewed (no longer due), the claim held until the job releases it.
      await sys.sql("update subscriptions set next_billing_at = next_billing_at + interval '1 day' where id = ?", [claimed[0]]);
      expect(await claimDueRenewals(sys.context(), enqueue, await live())).to.equal(0);
      expect(await releaseRenewalClaims(sys.context(), claimed)).to.equal(2);
      // Run again, the job has no live claim left to hand on.
      expect(await releaseRenewalClaims(sys.context(), claimed)).to.equal(0);
    });

    it("a subscription in retries falls due at its retry's hour, even with its billing date ahead", async () => {
      const { api } = await sys.createMerchant();
      const user = await createWalletUser(sys, { USDT_TRON: "100" });
      const plan = { amount: "1", interval: "MONTH" };
      const [retried, billed, notYet] = [
        (await approvedSubscription(sys, api, rpc.client, { plan, user })).subscriptionId,
        (await approvedSubscription(sys, api, rpc.client, { plan, user })).subscriptionId,
        (await approvedSubscription(sys, api, rpc.client, { plan, user })).subscriptionId,
      ];
      const now = await serviceNow(sys);
      const at = (hours: number) => new Date(now.getTime() + hours * 3_600_000);
      // As a subscription resumed into retries may stand: its billing date moved past the pause, its retry due.
      await sys.sql("update subscriptions set status = 'PAST_DUE', past_due_since = ?, next_retry_at = ?, next_billing_at = ? where id = ?", [
        at(-72),
        at(-48),
        at(24 * 20),
        retried,
      ]);
      await sys.sql("update subscriptions set next_billing_at = ? where id = ?", [at(-2), billed]);
      await sys.sql("update subscriptions set status = 'PAST_DUE', past_due_since = ?, next_retry_at = ?, next_billing_at = ? where id = ?", [
        at(-72),
        at(2),
        at(-72),
        notYet,
      ]);
      const mine = async (limit: number) =>
        (await claimDueSubscriptions(sys.context().em.fork(), now, limit, 60)).map((r) => r.id).filter((id) => [retried, billed, notYet].includes(id));
      expect(await mine(1)).to.deep.equal([retried]);
      expect(await mine(10)).to.deep.equal([billed]);
    });

    it("reads the claim's order from an index, with no sort of the due rows", async () => {
      const plans: string[] = [];
      const em = sys.context().em.fork();
      await em.transactional(async (tx) => {
        // Only index scans allowed: an order the index does not hold would show as a Sort above one.
        await tx.execute("set local enable_seqscan = off");
        await tx.execute("set local enable_bitmapscan = off");
        const explaining = new Proxy(tx, {
          get(target, key, receiver) {
            if (key !== "execute") return Reflect.get(target, key, receiver);
            return async (sql: string, params: unknown[]) => {
              const rows = await target.execute<{ "QUERY PLAN": string }[]>(`explain ${sql}`, params);
              plans.push(rows.map((r) => r["QUERY PLAN"]).join("\n"));
              return target.execute(sql, params);
            };
          },
        });
        await claimDueSubscriptions(explaining, await serviceNow(sys), 500, 60);
      });
      expect(plans).to.have.length(1);
      expect(plans[0]).to.include("Index Scan using subscriptions_renewal_claim_idx");
      expect(plans[0]).to.match(/Index Cond: \(date_trunc\('hour'/);
      expect(plans[0]).to.not.include("Sort");
    });
  });

  describe("fenced by the claim's token", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ workerGroups: [] });
    before(() => {
      rpc = subscriptionsRpc(sys);
    });
    after(() => rpc?.close());

    it("a job whose claim ran out and was taken again releases nothing of the later claim, and hands on nothing for it", async () => {
      const ids = await threeDue(sys, rpc);
      // A claim that has run out already: its job is slow, say, and the rows are due for the next sweep.
      const lapsed = await claimDueSubscriptions(sys.context().em.fork(), await serviceNow(sys), 10, -1);
      expect(lapsed.map((r) => r.id).sort()).to.deep.equal([...ids].sort());
      const slow = lapsed[0]!.claim;
      expect(lapsed.every((r) => r.claim === slow)).to.equal(true);
      const tokens: string[] = [];
      expect(await claimDueRenewals(sys.context(), async (_due, claim) => void tokens.push(claim))).to.equal(3);
      expect(tokens).to.have.length(1);
      expect(tokens[0]).to.not.equal(slow);
      const held = await claimsOf(sys, ids);

      // The slow job holds none of them now (no slot to hand on), and its release leaves the later claim.
      expect(await heldRenewalClaims(sys.context(), ids, slow)).to.equal(0);
      expect(await heldRenewalClaims(sys.context(), ids, tokens[0])).to.equal(3);
      expect(await releaseRenewalClaims(sys.context(), ids, slow)).to.equal(0);
      // Had it counted some at its start, a claim that ran out hands on nothing (a sweep since may have filled the
      // room); a live one hands on what it held; a job queued before claims had tokens, nothing.
      expect(await handOnSlots(sys.context(), 3, slow)).to.equal(0);
      expect(await handOnSlots(sys.context(), 3, tokens[0])).to.equal(3);
      expect(await handOnSlots(sys.context(), 3, undefined)).to.equal(0);
      expect(await claimsOf(sys, ids)).to.deep.equal(held);
      // The later job's release ends them, once.
      expect(await releaseRenewalClaims(sys.context(), ids, tokens[0])).to.equal(3);
      expect((await claimsOf(sys, ids)).every((c) => c.until === null)).to.equal(true);
      expect(await releaseRenewalClaims(sys.context(), ids, tokens[0])).to.equal(0);
    });
  });

  describe("counted per claim (migration 0041)", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ workerGroups: [] });
    before(() => {
      rpc = subscriptionsRpc(sys);
    });
    after(() => rpc?.close());

    it("the sweep's count is its live claims' counts, read without the subscriptions: a job takes off what its settle and its release ended, a claim that ran out counts nothing", async () => {
      const ids = await threeDue(sys, rpc);
      const liveRows = async () => (await sys.sql<{ n: number }>("select count(*)::int as n from subscriptions where renewal_claimed_until >= now()"))[0]!.n;
      // The count and the scans of `subscriptions` on its connection just before and after it (the counts of
      // pg_stat_xact_user_tables the backend has not reported yet: this transaction's, and maybe earlier ones').
      const count = () =>
        sys.context().em.transactional(async (em) => {
          const scans = async () =>
            Number(
              (
                await em.execute<{ scans: number }[]>(
                  "select (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::int as scans from pg_stat_xact_user_tables where relname = 'subscriptions'",
                )
              )[0]?.scans ?? 0,
            );
          const before = await scans();
          const n = await countLiveRenewalClaims(em);
          return { n, scans: (await scans()) - before };
        });

      const tokens: string[] = [];
      expect(await claimDueRenewals(sys.context(), async (_due, claim) => void tokens.push(claim))).to.equal(3);
      expect(await count()).to.deep.equal({ n: 3, scans: 0 });
      expect(await liveRows()).to.equal(3);

      // A job counts its claims when it starts; its settle ends those of the rows it renews in their row update,
      // its release the rest: its claim's count loses all it held.
      const held = await heldRenewalClaims(sys.context(), ids, tokens[0]);
      expect(held).to.equal(3);
      await sys.sql("update subscriptions set renewal_claimed_until = null where id in (?, ?)", [ids[0], ids[1]]);
      expect(await releaseRenewalClaims(sys.context(), ids, tokens[0], held)).to.equal(1);
      expect(await liveRows()).to.equal(0);
      expect((await count()).n).to.equal(0);

      // Claimed again, then run out (a job lost with its worker): its count goes with its claims.
      expect(await claimDueRenewals(sys.context(), async () => {})).to.equal(3);
      expect((await count()).n).to.equal(3);
      await sys.sql("update subscriptions set renewal_claimed_until = now() - interval '1 second' where renewal_claimed_until is not null");
      await sys.sql("update renewal_claims set claimed_until = now() - interval '1 second'");
      expect(await liveRows()).to.equal(0);
      expect((await count()).n).to.equal(0);
      expect((await sys.sql<{ n: number }>("select count(*)::int as n from renewal_claims"))[0]!.n).to.equal(0);

      // Released by id (a job queued before claims had tokens): each live claim ended comes off its claim's count.
      expect(await claimDueRenewals(sys.context(), async () => {})).to.equal(3);
      expect(await releaseRenewalClaims(sys.context(), ids.slice(0, 2))).to.equal(2);
      expect(await count()).to.deep.equal({ n: 1, scans: 0 });
      expect(await liveRows()).to.equal(1);
    });
  });

  it("a set claimed again is the same job whatever its claim: re-added while its job waits or runs, it adds nothing", () => {
    // A backlog whose claims ran out is claimed again in the same order and cut into the same sets; with the claim in
    // the id each came back as a second job of the same subscriptions, which met the first at every lock.
    const ids = [randomUUID(), randomUUID()];
    expect(renewBatchKind.id({ subscriptionIds: ids, claim: "1" })).to.equal(renewBatchKind.id({ subscriptionIds: ids, claim: "2" }));
    expect(renewBatchKind.id({ subscriptionIds: ids, claim: "1" })).to.equal(renewBatchKind.id({ subscriptionIds: ids }));
    expect(renewBatchKind.id({ subscriptionIds: ids })).to.not.equal(renewBatchKind.id({ subscriptionIds: [ids[1]!, ids[0]!] }));
  });

  describe("the hand-on, through the job", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    let clients: RpcClients;
    let deps: JobDeps;
    // No worker: the test runs the job's handler itself and reads what it queued.
    const sys = useTestSystem({ workerGroups: [] });
    before(() => {
      rpc = subscriptionsRpc(sys);
      clients = new RpcClients(sys.config.internalApiToken);
      deps = jobDeps(sys, clients);
    });
    after(() => {
      clients?.close();
      rpc?.close();
    });

    it("a set of a claim that took all its room hands its slots on: the next due subscription, queued with its own claim", async () => {
      const ids = await threeDue(sys, rpc);
      const claims: { ids: string[]; claim: string; more: boolean }[] = [];
      const capture = async (due: DueRenewal[], claim: string, more: boolean) => void claims.push({ ids: due.map((d) => d.subscriptionId), claim, more });
      // Two of the three: all the room it had, so more may be due.
      expect(await claimDueRenewals(sys.context(), capture, 2)).to.equal(2);
      const [first] = claims;
      expect(first!.more).to.equal(true);
      const third = ids.find((id) => !first!.ids.includes(id))!;
      const handler = handlersOf(renewBatchKind)[0] as JobHandler<{ subscriptionIds: string[]; claim?: string; more?: boolean }>;
      await handler.handle(deps, { subscriptionIds: first!.ids, claim: first!.claim, more: true });

      // Renewed and released; its two slots claimed the third, queued as a set with the new claim's token.
      for (const id of first!.ids) expect((await chargesOf(sys, id)).map((c) => [c.period_index, c.status]).at(-1)).to.deep.equal([1, "SUCCEEDED"]);
      expect((await claimsOf(sys, first!.ids)).every((c) => c.until === null)).to.equal(true);
      const queued = async () =>
        (await sys.system.queues!.queue("renewals").getJobs(["waiting"]))
          .filter((j) => j.name === renewBatchKind.name)
          .map((j) => j.data as { subscriptionIds: string[]; claim: string; more: boolean });
      const sets = await queued();
      expect(sets.map((j) => j.subscriptionIds)).to.deep.equal([[third]]);
      expect(sets[0]!.claim).to.be.a("string").and.not.equal(first!.claim);
      // Two slots, one found: nothing more is due, so the third's job will not hand on.
      expect(sets[0]!.more).to.equal(false);
      expect((await claimsOf(sys, [third]))[0]!.until).to.not.equal(null);
      // Run again (a retried job), it has no live claim left to hand on: nothing more is queued.
      await handler.handle(deps, { subscriptionIds: first!.ids, claim: first!.claim, more: true });
      expect(await queued()).to.have.length(1);
    });

    it("a job queued before claims said whether more is due, not a full set, hands nothing on", async () => {
      await threeDue(sys, rpc);
      const claims: { ids: string[]; claim: string }[] = [];
      // Two claimed without a count (the live claims of the test before stay).
      expect(await claimNextRenewals(sys.context(), async (due, claim) => void claims.push({ ids: due.map((d) => d.subscriptionId), claim }), 2)).to.equal(2);
      const [first] = claims;
      const handler = handlersOf(renewBatchKind)[0] as JobHandler<{ subscriptionIds: string[]; claim?: string }>;
      const waitingSets = async () => (await sys.system.queues!.queue("renewals").getJobs(["waiting"])).filter((j) => j.name === renewBatchKind.name);
      const before = (await waitingSets()).length;
      // Not full: renewed and released, nothing handed on.
      await handler.handle(deps, { subscriptionIds: first!.ids, claim: first!.claim });
      expect((await claimsOf(sys, first!.ids)).every((c) => c.until === null)).to.equal(true);
      expect(await waitingSets()).to.have.length(before);
    });
  });

  describe("a set claimed anew while its job still runs", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    let clients: RpcClients;
    let sweep: () => Promise<void>;
    // No worker: the test plays the job itself, and the sweep is run as the watchdog runs it.
    const sys = useTestSystem({ workerGroups: [] });
    before(() => {
      rpc = subscriptionsRpc(sys);
      clients = new RpcClients(sys.config.internalApiToken);
      const handler = handlersOf(renewalsSweep)[0] as SweepHandler;
      sweep = () => handler.handle(jobDeps(sys, clients));
    });
    after(() => {
      clients?.close();
      rpc?.close();
    });

    it("gets a job of its own instead of waiting with no job for its claim to run out", async () => {
      const ids = await threeDue(sys, rpc);
      const queue = sys.system.queues!.queue("renewals");
      // Only the set's job in the queue (the top-ups queued theirs), so the worker below takes that one.
      await queue.drain();
      await sweep();
      const [queued] = await queue.getJobs(["waiting"]);
      const first = queued!.data as { subscriptionIds: string[]; claim: string };
      expect([...first.subscriptionIds].sort()).to.deep.equal([...ids].sort());

      // A worker takes that job, and it is past its settle (which ends the rows' claims), not yet ended.
      const connection = new Redis(sys.config.redisUrl, { maxRetriesPerRequest: null });
      const worker = new Worker(queue.name, null, { connection, prefix: queue.opts.prefix, autorun: false });
      try {
        const running = await worker.getNextJob("test-lock");
        expect(running?.id).to.equal(queued!.id);
        await sys.sql(`update subscriptions set renewal_claimed_until = null where id in (${ids.map(() => "?").join(", ")})`, ids);

        // Due again (a catch-up period, or a clock advanced meanwhile): the sweep claims the same set anew. The add of
        // the set's own id does nothing while that job runs; the set gets a job of its own, with the new claim.
        await sweep();
        const waiting = (await queue.getJobs(["waiting"])).map((j) => j.data as { subscriptionIds: string[]; claim: string; again?: string });
        expect(waiting).to.have.length(1);
        expect(waiting[0]!.subscriptionIds).to.deep.equal(first.subscriptionIds);
        expect(waiting[0]!.claim).to.be.a("string").and.not.equal(first.claim);
        expect(waiting[0]!.again).to.equal(waiting[0]!.claim);
        expect((await claimsOf(sys, ids)).every((c) => c.until !== null)).to.equal(true);
      } finally {
        await worker.close();
        connection.disconnect();
      }
    });
  });

  describe("cut into sets by payer", () => {
    /** `counts[i]` renewals of payer i, in the claim's order. */
    const claimOf = (counts: number[]): DueRenewal[] =>
      counts.flatMap((n, payer) => Array.from({ length: n }, (_, k) => ({ subscriptionId: `${payer}-${k}`, periodIndex: 1, attempt: 1, payer: `p${payer}` })));
    const shape = (sets: DueRenewal[][]) =>
      sets.map((set) => [...new Set(set.map((d) => d.payer))].map((p) => `${p}:${set.filter((d) => d.payer === p).length}`).join(" "));

    it("whole payers, so that no two sets of a claim charge the same wallet account", () => {
      // Payers of 200 with sets of 250: cut every 250, every set shared a payer with the next and waited for its commit.
      expect(shape(renewalSets(claimOf([200, 200, 200]), 250))).to.deep.equal(["p0:200", "p1:200", "p2:200"]);
      expect(shape(renewalSets(claimOf([100, 100, 100, 30]), 250))).to.deep.equal(["p0:100 p1:100", "p2:100 p3:30"]);
    });

    it("a payer with more than a set alone takes sets of its own, its last shared only with the payers after it", () => {
      expect(shape(renewalSets(claimOf([10, 600, 40]), 250))).to.deep.equal(["p0:10", "p1:250", "p1:250", "p1:100 p2:40"]);
    });

    it("keeps every renewal once, in the claim's order, no set over its size", () => {
      const due = claimOf([3, 7, 1, 12, 5, 5, 2]);
      const sets = renewalSets(due, 8);
      expect(sets.flat()).to.deep.equal(due);
      expect(sets.every((set) => set.length > 0 && set.length <= 8)).to.equal(true);
      expect(renewalSets([], 8)).to.deep.equal([]);
    });
  });

  describe("in what order", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const sys = useTestSystem({ workerGroups: [] });
    before(() => {
      rpc = subscriptionsRpc(sys);
    });
    after(() => rpc?.close());

    it("the oldest hour first; within an hour by payer, so that the jobs in flight charge different wallet accounts", async () => {
      const { api } = await sys.createMerchant();
      const payers = [await createWalletUser(sys, { USDT_TRON: "100" }), await createWalletUser(sys, { USDT_TRON: "100" })].sort((a, b) =>
        a.id < b.id ? -1 : 1,
      );
      // Approved alternately, so that neither the billing dates nor the ids group them by payer.
      const byPayer: string[][] = [[], []];
      for (let i = 0; i < 6; i++) {
        byPayer[i % 2]!.push(
          (await approvedSubscription(sys, api, rpc.client, { plan: { amount: "1", interval: "DAY" }, user: payers[i % 2]! })).subscriptionId,
        );
      }
      // All in one hour (approvals can straddle an hour's end), in approval order, a minute apart. The hour before the
      // first's billing hour, so that all six are due a day on whatever minute of the hour the test runs in.
      const approved = [0, 1, 2].flatMap((k) => [byPayer[0]![k]!, byPayer[1]![k]!]);
      const [base] = await sys.sql<{ hour: Date }>("select date_trunc('hour', next_billing_at) - interval '1 hour' as hour from subscriptions where id = ?", [
        approved[0],
      ]);
      for (const [minute, id] of approved.entries()) {
        await sys.sql("update subscriptions set next_billing_at = ?::timestamptz + make_interval(mins => ?) where id = ?", [base!.hour, minute, id]);
      }
      // One of the second payer's a day older: it comes first, whoever pays it.
      const older = byPayer[1]![2]!;
      await sys.sql("update subscriptions set next_billing_at = next_billing_at - interval '1 day' where id = ?", [older]);
      await advanceBy(sys, DAY + 60);
      const claimed: string[] = [];
      const claim = (lookahead: number) => claimDueRenewals(sys.context(), async (due) => void claimed.push(...due.map((d) => d.subscriptionId)), lookahead);
      expect(await claim(1)).to.equal(1);
      expect(claimed).to.deep.equal([older]);
      // Then the rest of that hour: the first payer's three, then the second's two.
      expect(await claim(4)).to.equal(3);
      expect(await claim(6)).to.equal(2);
      expect(claimed.slice(1, 4).sort()).to.deep.equal([...byPayer[0]!].sort());
      expect(claimed.slice(4).sort()).to.deep.equal(byPayer[1]!.slice(0, 2).sort());
    });
  });
});
