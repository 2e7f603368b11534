import { expect } from "chai";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { useTestSystem } from "../../support/system.ts";
import { emitEvents } from "../../support/events.ts";
import { relayEvents } from "../../../services/events/relay-events.ts";
import type { ApiClient } from "../../support/http.ts";

/**
 * The polling feed: `sequenceAfter` follows commit order, so an event whose
 * transaction commits late (with an earlier createdAt) is never skipped.
 */
describe("event feed (GET /api/v1/events?sequenceAfter=)", () => {
  let merchantId: string;
  let api: ApiClient;

  // No workers: the relay runs by hand so the test decides when events are published.
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    ({ id: merchantId, api } = await sys.createMerchant("Feed"));
  });

  const relay = () => relayEvents(sys.context(), sys.system.queues!);
  const feed = async (after: number, extra = "") => {
    const res = await api.get(`/api/v1/events?sequenceAfter=${after}${extra}`);
    expect(res.status, res.text).to.equal(200);
    return res.body as { data: { id: string; sequence: number; createdAt: string }[]; hasMore: boolean; nextCursor: null };
  };

  it("publishes relayed events in commit order with a sequence, oldest first, paged by the last sequence", async () => {
    const ids = await emitEvents(sys, merchantId, 5);
    expect((await feed(0)).data.filter((e) => ids.includes(e.id))).to.deep.equal([]); // not relayed yet
    const unpublished = await api.get(`/api/v1/events/${ids[0]}`);
    expect(unpublished.body.sequence).to.equal(null);
    await relay();
    const first = await feed(0, "&limit=3");
    expect(first.hasMore).to.equal(true);
    expect(first.nextCursor).to.equal(null);
    const rest = await feed(first.data.at(-1)!.sequence);
    const all = [...first.data, ...rest.data];
    expect(all.map((e) => e.id)).to.deep.equal(ids);
    const sequences = all.map((e) => e.sequence);
    expect(sequences).to.deep.equal([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).to.equal(sequences.length);
    expect((await api.get(`/api/v1/events/${ids[0]}`)).body.sequence).to.equal(sequences[0]);
  });

  it("never skips an event whose transaction commits late, where createdAfter would", async () => {
    const lateId = randomUUID();
    const client = new pg.Client({ connectionString: sys.database.url });
    await client.connect();
    try {
      // A change that started first (earlier createdAt) but commits last.
      await client.query("begin");
      await client.query("insert into events (id, merchant_id, type, data, created_at) values ($1, $2, 'plan.created', '{}', now() - interval '1 minute')", [
        lateId,
        merchantId,
      ]);
      const [early] = await emitEvents(sys, merchantId, 1);
      await relay();
      const seen = (await feed(0)).data;
      const last = seen.at(-1)!;
      expect(last.id).to.equal(early);
      await client.query("commit");
      await relay();
      // The feed shows it after the last sequence seen…
      expect((await feed(last.sequence)).data.map((e) => e.id)).to.deep.equal([lateId]);
      // …while polling by creation time from the last createdAt seen would have missed it.
      const byTime = await api.get(`/api/v1/events?createdAfter=${encodeURIComponent(last.createdAt)}`);
      expect(byTime.body.data.map((e: { id: string }) => e.id)).not.to.include(lateId);
    } finally {
      await client.end();
    }
  });

  it("keeps each merchant's feed to its own events and validates the parameter", async () => {
    const other = await sys.createMerchant("Other feed");
    await emitEvents(sys, other.id, 2);
    await relay();
    const mine = (await feed(0)).data;
    const theirs = (await other.api.get("/api/v1/events?sequenceAfter=0")).body.data as { id: string }[];
    expect(theirs).to.have.length(2);
    expect(mine.some((e) => theirs.some((t) => t.id === e.id))).to.equal(false);
    // Each merchant's feed is numbered on its own: a new merchant starts at 1, whatever others did.
    expect((theirs as unknown as { sequence: number }[]).map((e) => e.sequence)).to.deep.equal([1, 2]);
    for (const bad of ["-1", "abc", "1.5"]) {
      const res = await api.get(`/api/v1/events?sequenceAfter=${bad}`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain("sequenceAfter");
    }
    const mixed = await api.get("/api/v1/events?sequenceAfter=0&createdAfter=2026-01-01T00:00:00Z");
    expect(mixed.status).to.equal(400);
    expect(mixed.body.message).to.contain("sequenceAfter");
  });

  it("numbers each merchant's feed gap-free in commit order, even when merchants' events interleave in one relay batch", async () => {
    const a = await sys.createMerchant("Interleaved A");
    const b = await sys.createMerchant("Interleaved B");
    for (let i = 0; i < 3; i++) {
      await emitEvents(sys, a.id, 1);
      await emitEvents(sys, b.id, 2);
    }
    await relay();
    await emitEvents(sys, a.id, 2);
    await relay();
    const seqA = (await a.api.get("/api/v1/events?sequenceAfter=0")).body.data.map((e: { sequence: number }) => e.sequence);
    const seqB = (await b.api.get("/api/v1/events?sequenceAfter=0")).body.data.map((e: { sequence: number }) => e.sequence);
    expect(seqA).to.deep.equal([1, 2, 3, 4, 5]);
    expect(seqB).to.deep.equal([1, 2, 3, 4, 5, 6]);
    const afterThree = (await a.api.get("/api/v1/events?sequenceAfter=3")).body.data.map((e: { sequence: number }) => e.sequence);
    expect(afterThree).to.deep.equal([4, 5]);
  });

  it("combined with type, lists only that type's events, in feed order, each with its own feed position", async () => {
    const m = await sys.createMerchant("Typed feed");
    const plans = await emitEvents(sys, m.id, 2, "plan.created");
    const unpaid = await emitEvents(sys, m.id, 2, "subscription.unpaid");
    const more = await emitEvents(sys, m.id, 1, "plan.created");
    await relay();
    const all = (await m.api.get("/api/v1/events?sequenceAfter=0")).body.data as { id: string; sequence: number }[];
    const typed = (await m.api.get("/api/v1/events?sequenceAfter=0&type=plan.created")).body.data as { id: string; sequence: number }[];
    expect(typed.map((e) => e.id)).to.deep.equal([...plans, ...more]);
    expect(typed.map((e) => e.sequence)).to.deep.equal(all.filter((e) => typed.some((t) => t.id === e.id)).map((e) => e.sequence));
    expect(all.filter((e) => unpaid.includes(e.id))).to.have.length(2);
    const afterFirst = (await m.api.get(`/api/v1/events?sequenceAfter=${typed[0]!.sequence}&type=plan.created&limit=1`)).body;
    expect(afterFirst.data.map((e: { id: string }) => e.id)).to.deep.equal([plans[1]]);
    expect(afterFirst.hasMore).to.equal(true);
  });

  it("goes on after its last position when retention has dropped every month of it: a poller's place stays valid", async () => {
    const m = await sys.createMerchant("Feed idle");
    await emitEvents(sys, m.id, 3);
    await relay();
    const mine = (await m.api.get("/api/v1/events?sequenceAfter=0")).body.data as { sequence: number }[];
    expect(mine.map((e) => e.sequence)).to.deep.equal([1, 2, 3]);
    // Retention drops whole months of the feed and of the events (here: all of this merchant's).
    await sys.sql("delete from event_feed where merchant_id = ?", [m.id]);
    await sys.sql("delete from events where merchant_id = ?", [m.id]);
    const [later] = await emitEvents(sys, m.id, 1);
    await relay();
    const after = (await m.api.get("/api/v1/events?sequenceAfter=3")).body.data as { id: string; sequence: number }[];
    expect(after.map((e) => [e.id, e.sequence])).to.deep.equal([[later, 4]]);
  });

  it("numbers after the feed's last position when it is further than the head (a relay of the release before the heads placed events)", async () => {
    const m = await sys.createMerchant("Feed upgrade");
    await emitEvents(sys, m.id, 3);
    await relay();
    // As if the previous release's relay had placed events 2 and 3 after the migration wrote the head at 1.
    await sys.sql("update merchant_feed_heads set last_seq = 1 where merchant_id = ?", [m.id]);
    const [next] = await emitEvents(sys, m.id, 1);
    await relay();
    const after = (await m.api.get("/api/v1/events?sequenceAfter=3")).body.data as { id: string; sequence: number }[];
    expect(after.map((e) => [e.id, e.sequence])).to.deep.equal([[next, 4]]);
    expect(await sys.sql("select last_seq::int as n from merchant_feed_heads where merchant_id = ?", [m.id])).to.deep.equal([{ n: 4 }]);
  });
});
