import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import { recordEvent, recordEvents } from "../../../services/events/record-event.ts";
import { Event } from "../../../services/events/entities.ts";

describe("recordEvent (transactional outbox)", () => {
  let merchantId: string;

  const sys = useTestSystem({ gateway: true, workerGroups: [] });
  before(async () => {
    merchantId = (await sys.createMerchant()).id;
  });

  it("leaves no event when the transaction that records it rolls back", async () => {
    const ctx = sys.context();
    let eventId = "";
    const failure = await ctx.em
      .transactional(async (em) => {
        eventId = recordEvent(em, ctx.clock, { merchantId, type: "subscription.cancelled", data: { id: "sub_1" } }).id;
        await em.flush(); // the row is written inside the transaction…
        throw new Error("the state change failed");
      })
      .catch((err: Error) => err);
    expect((failure as Error).message).to.equal("the state change failed");
    // …and is gone with it.
    expect(await sys.sql("select id from events where id = ?", [eventId])).to.deep.equal([]);
  });

  it("commits the event with the change, unrelayed, stamped with the service clock", async () => {
    const ctx = sys.context();
    const before = ctx.clock.now();
    const id = await ctx.em.transactional(
      async (em) => recordEvent(em, ctx.clock, { merchantId, type: "subscription.paused", data: { id: "sub_2", status: "PAUSED" } }).id,
    );
    const row = await sys.context().em.findOneOrFail(Event, id);
    expect(row).to.include({ merchantId, type: "subscription.paused", relayedAt: null });
    expect(row.data).to.deep.equal({ id: "sub_2", status: "PAUSED" });
    expect(row.createdAt.getTime()).to.be.at.least(before.getTime());
  });

  describe("recordEvents (set-based: one statement for many)", () => {
    it("commits the events with the change, in the order given, unrelayed, stamped with the service clock, as recordEvent would", async () => {
      const ctx = sys.context();
      const before = ctx.clock.now();
      const refs = ["a", "b", "c", "d"].map((r) => `batch-${r}-${before.getTime()}`);
      await ctx.em.fork().transactional(async (em) => {
        await recordEvents(
          em,
          ctx.clock,
          refs.map((ref) => ({ merchantId, type: "subscription.expired", data: { id: ref, nested: { amount: "1.10" }, list: [1, "x"] } })),
        );
      });
      const rows = await sys.sql<{ seq: string; type: string; merchant_id: string; data: { id: string }; relayed_at: Date | null; created_at: Date }>(
        "select seq, type, merchant_id, data, relayed_at, created_at from events where data->>'id' = any(?::text[]) order by seq",
        [`{${refs.join(",")}}`],
      );
      expect(rows.map((r) => r.data.id)).to.deep.equal(refs);
      for (const row of rows) {
        expect(row).to.include({ type: "subscription.expired", merchant_id: merchantId, relayed_at: null });
        expect(row.data).to.deep.equal({ id: row.data.id, nested: { amount: "1.10" }, list: [1, "x"] });
        expect(new Date(row.created_at).getTime()).to.be.at.least(before.getTime());
      }
    });

    it("leaves none when the transaction rolls back, and refuses to run outside a transaction", async () => {
      const ctx = sys.context();
      const ref = `rollback-${Date.now()}`;
      const failure = await ctx.em
        .fork()
        .transactional(async (em) => {
          await recordEvents(em, ctx.clock, [{ merchantId, type: "subscription.expired", data: { id: ref } }]);
          throw new Error("the state change failed");
        })
        .catch((err: Error) => err);
      expect((failure as Error).message).to.equal("the state change failed");
      expect(await sys.sql("select id from events where data->>'id' = ?", [ref])).to.deep.equal([]);

      const outside = await recordEvents(ctx.em.fork(), ctx.clock, [{ merchantId, type: "subscription.expired", data: { id: ref } }]).catch(
        (err: Error) => err,
      );
      expect((outside as Error).message).to.match(/outside a transaction/);
      expect(await sys.sql("select id from events where data->>'id' = ?", [ref])).to.deep.equal([]);
    });
  });
});
