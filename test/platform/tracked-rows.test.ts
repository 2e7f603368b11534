import { expect } from "chai";
import { trackedRowsWrites, trackRows, writeTrackedRows } from "../../services/platform/database/tracked-rows.ts";
import { executeWrites } from "../../services/platform/database/bound-values.ts";
import { collectedEventsInsert, collectEvents, recordEvent, reserveCollectedSeqs, writeCollectedEvents } from "../../services/events/record-event.ts";
import { lockSubscriptionRows } from "../../services/subscriptions/subscription-store.ts";
import { Subscription, type SubscriptionRow } from "../../services/subscriptions/entities.ts";
import { useTestSystem } from "../support/system.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { approvedSubscription } from "../support/billing.ts";

/** Plain rows written back set-based (tracked-rows.ts) and events collected as rows (record-event.ts): what a renewal set's settle uses. */
describe("tracked rows and collected events", () => {
  const sys = useTestSystem({ workerGroups: [] });
  let rpc: ReturnType<typeof subscriptionsRpc>;
  before(() => {
    rpc = subscriptionsRpc(sys);
  });
  after(() => rpc?.close());

  async function threeSubscriptions(): Promise<string[]> {
    const { api } = await sys.createMerchant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await approvedSubscription(sys, api, rpc.client)).subscriptionId);
    return ids.sort();
  }

  /** Locks the subscriptions (plus `extra` rows), tracks them, lets `change` change them and writes them: the error it ends with. */
  async function writeFailure(
    ids: string[],
    change: (rows: SubscriptionRow[]) => void,
    extra: (rows: SubscriptionRow[]) => SubscriptionRow[] = () => [],
  ): Promise<unknown> {
    let failure: unknown;
    await sys
      .context()
      .em.fork()
      .transactional(async (em) => {
        const locked = await lockSubscriptionRows(em, ids);
        const rows = [...locked, ...extra(locked)];
        const tracked = trackRows(em, Subscription, rows);
        change(rows);
        await writeTrackedRows(em, tracked);
      })
      .catch((err: unknown) => {
        failure = err;
      });
    return failure;
  }

  it("writes only the columns each row changed, exactly: microseconds and numeric digits the row did not change stay as stored", async () => {
    const ids = await threeSubscriptions();
    // Values JS could not hold exactly: a timestamp to the microsecond, a numeric beyond a double's digits.
    await sys.sql(
      `update subscriptions set renewal_claimed_until = '2031-01-02 03:04:05.123456+00', credit_balance = '12345678901234567890.123456789012345678' where id = any(string_to_array(?, ',')::uuid[])`,
      [ids.join(",")],
    );
    const before = await sys.sql<{ id: string; version: number; updated_at: string }>(
      "select id, version, updated_at::text from subscriptions where id = any(string_to_array(?, ',')::uuid[]) order by id",
      [ids.join(",")],
    );
    const marker = `with-rows-${Date.now()}`;
    const ctx = sys.context();
    const shapes = await ctx.em.fork().transactional(async (em) => {
      const rows = await lockSubscriptionRows(em, ids);
      const tracked = trackRows(em, Subscription, rows);
      // Two shapes of change, and a row left alone.
      rows[0]!.status = "PAST_DUE";
      rows[0]!.pastDueSince = new Date("2031-01-01T00:00:00.000Z");
      rows[0]!.retryCount = 2;
      rows[1]!.creditBalance = "0.000000000000000001";
      rows[1]!.metadata.note = "changed in place";
      rows[1]!.fallbackAssets.push("USDC_TRON");
      // Written with an event in one statement, as a renewal set writes its charges and events.
      collectEvents(em);
      recordEvent(em, ctx.clock, { merchantId: rows[0]!.merchantId, type: "subscription.past_due", data: { marker } });
      const writes = [collectedEventsInsert(em), ...trackedRowsWrites(em, tracked)];
      await executeWrites(em, writes);
      return writes.map((w) => [w.what, w.rows]);
    });
    expect(shapes).to.deep.equal([
      ["events", 1],
      ['rows of "subscriptions"', 1],
      ['rows of "subscriptions"', 1],
    ]);
    expect(await sys.sql("select type from events where data->>'marker' = ?", [marker])).to.deep.equal([{ type: "subscription.past_due" }]);
    const after = await sys.sql<Record<string, unknown>>(
      `select id, status, retry_count, credit_balance::text, renewal_claimed_until::text, metadata, fallback_assets, version, updated_at::text
         from subscriptions where id = any(string_to_array(?, ',')::uuid[]) order by id`,
      [ids.join(",")],
    );
    expect(after[0]).to.include({ status: "PAST_DUE", retry_count: 2, credit_balance: "12345678901234567890.123456789012345678" });
    expect(after[1]).to.include({ status: "ACTIVE", credit_balance: "0.000000000000000001" });
    expect(after[1]!.metadata).to.deep.equal({ note: "changed in place" });
    expect(after[1]!.fallback_assets).to.deep.equal(["USDC_TRON"]);
    expect(after[2]).to.include({ status: "ACTIVE", credit_balance: "12345678901234567890.123456789012345678" });
    for (const row of after) expect(row.renewal_claimed_until).to.equal("2031-01-02 03:04:05.123456+00");
    // Nothing the code did not touch: no version raised, no updated_at rewritten (with its microseconds).
    expect(after.map((r) => [r.id, r.version, r.updated_at])).to.deep.equal(before.map((r) => [r.id, r.version, r.updated_at]));
  });

  it("refuses to write a row that is not in the table, and the transaction writes nothing", async () => {
    const ids = await threeSubscriptions();
    const failure = await writeFailure(
      ids,
      (rows) => {
        for (const row of rows) row.retryCount = 7;
      },
      // A row that is not there (as one deleted would be): a copy of the last under an id no row has.
      (rows) => [{ ...rows[2]!, id: "00000000-0000-4000-8000-000000000000" }],
    );
    expect(String(failure)).to.match(/rows of "subscriptions": 3 of 4 rows written/);
    const rows = await sys.sql<{ retry_count: number }>(`select retry_count from subscriptions where id = any(string_to_array(?, ',')::uuid[])`, [
      ids.join(","),
    ]);
    expect(rows.map((r) => r.retry_count)).to.deep.equal([0, 0, 0]);
  });

  it("refuses an invalid Date (JSON would write it as null) instead of clearing the column", async () => {
    const ids = await threeSubscriptions();
    const failure = await writeFailure(ids, (rows) => {
      rows[0]!.nextBillingAt = new Date(Number.NaN);
    });
    expect(String(failure)).to.match(/nextBillingAt is an invalid Date/);
    const [row] = await sys.sql<{ next_billing_at: unknown }>("select next_billing_at from subscriptions where id = ?", [ids[0]]);
    expect(row!.next_billing_at).to.not.equal(null);
  });

  it("collected events are inserted in the order recorded, with their data as completed after recordEvent, in the same transaction", async () => {
    const { id: merchantId } = await sys.createMerchant();
    const marker = `collected-${Date.now()}`;
    const ctx = sys.context();
    await ctx.em.fork().transactional(async (em) => {
      collectEvents(em);
      const first = recordEvent(em, ctx.clock, { merchantId, type: "plan.created", data: { marker, n: 1 } });
      recordEvent(em, ctx.clock, { merchantId, type: "plan.updated", data: { marker, n: 2 } });
      // Completed after the call, as a settle completes a version or a receipt number.
      first.data.completed = true;
      await writeCollectedEvents(em);
      // Nothing left in the unit of work: the collected events were never entities.
      expect(em.getUnitOfWork().getIdentityMap().values().length).to.equal(0);
    });
    const rows = await sys.sql<{ type: string; data: Record<string, unknown> }>(
      "select type, data from events where merchant_id = ? and data->>'marker' = ? order by seq",
      [merchantId, marker],
    );
    expect(rows).to.deep.equal([
      { type: "plan.created", data: { marker, n: 1, completed: true } },
      { type: "plan.updated", data: { marker, n: 2 } },
    ]);
  });

  it("collected events written in parts (seqs reserved first) keep the order recorded; a part without reserved seqs is refused", async () => {
    const { id: merchantId } = await sys.createMerchant();
    const marker = `parts-${Date.now()}`;
    const ctx = sys.context();
    await ctx.em.fork().transactional(async (em) => {
      collectEvents(em);
      const events = [1, 2, 3, 4, 5].map((n) => recordEvent(em, ctx.clock, { merchantId, type: n % 2 ? "plan.created" : "plan.updated", data: { marker, n } }));
      expect(() => collectedEventsInsert(em, () => true)).to.throw(/seq reserved/);
      await reserveCollectedSeqs(em);
      expect(() => recordEvent(em, ctx.clock, { merchantId, type: "plan.created", data: { marker, n: 6 } })).to.throw(/reserved already/);
      // The later events first, then the earlier ones completed meanwhile (as a set writes its receipt events last).
      const late = new Set(events.slice(0, 2));
      await executeWrites(em, [collectedEventsInsert(em, (e) => !late.has(e))]);
      events[0]!.data.completed = true;
      await writeCollectedEvents(em);
    });
    const rows = await sys.sql<{ n: number; completed: boolean | null }>(
      "select (data->>'n')::int as n, (data->>'completed')::boolean as completed from events where merchant_id = ? and data->>'marker' = ? order by seq",
      [merchantId, marker],
    );
    expect(rows).to.deep.equal([
      { n: 1, completed: true },
      { n: 2, completed: null },
      { n: 3, completed: null },
      { n: 4, completed: null },
      { n: 5, completed: null },
    ]);
    // Each reached its consumers once.
    const [queued] = await sys.sql<{ n: number }>(
      "select count(*)::int as n from event_outbox o join events e on e.id = o.event_id where e.merchant_id = ? and e.data->>'marker' = ?",
      [merchantId, marker],
    );
    expect(queued!.n).to.equal(5);
  });

  it("collectEvents refuses a manager outside a transaction, and a second collection on the same one", async () => {
    expect(() => collectEvents(sys.context().em.fork())).to.throw(/outside a transaction/);
    await sys
      .context()
      .em.fork()
      .transactional(async (em) => {
        collectEvents(em);
        expect(() => collectEvents(em)).to.throw(/already collects/);
        await writeCollectedEvents(em);
      });
  });
});
