import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import { recordEvent, recordEvents } from "../../../services/events/record-event.ts";
import { Event } from "../../../services/events/entities.ts";
import { EVENT_TYPES } from "../../../services/events/contract.ts";
import { EMAIL_EVENT_TYPES } from "../../../services/emails/contract.ts";

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
    expect(row).to.include({ merchantId, type: "subscription.paused", publishedSeq: null });
    expect(await sys.sql("select consumer from event_outbox where event_id = ?", [id])).to.deep.equal([{ consumer: "relay" }]);
    expect(row.data).to.deep.equal({ id: "sub_2", status: "PAUSED" });
    expect(row.createdAt.getTime()).to.be.at.least(before.getTime());
  });

  it("queues every event for the relay, and those of EMAIL_EVENT_TYPES for the email collector too (the insert trigger's list, migration 0038)", async () => {
    const ctx = sys.context();
    const ref = `queued-${Date.now()}`;
    await ctx.em.fork().transactional((em) =>
      recordEvents(
        em,
        ctx.clock,
        EVENT_TYPES.map((type) => ({ merchantId, type, data: { id: ref } })),
      ),
    );
    const rows = await sys.sql<{ type: string; consumers: string[] }>(
      `select e.type, array(select o.consumer from event_outbox o where o.event_id = e.id order by o.consumer) as consumers
         from events e where e.merchant_id = ? and e.data->>'id' = ?`,
      [merchantId, ref],
    );
    expect(rows).to.have.length(EVENT_TYPES.length);
    const forEmails = rows.filter((r) => r.consumers.includes("emails")).map((r) => r.type);
    expect(forEmails).to.have.members(EMAIL_EVENT_TYPES);
    expect(rows.every((r) => r.consumers.includes("relay"))).to.equal(true);
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
      const rows = await sys.sql<{ seq: string; type: string; merchant_id: string; data: { id: string }; queued: string[]; created_at: Date }>(
        `select e.seq, e.type, e.merchant_id, e.data, e.created_at, array(select o.consumer from event_outbox o where o.event_id = e.id) as queued
           from events e where e.data->>'id' = any(?::text[]) order by e.seq`,
        [`{${refs.join(",")}}`],
      );
      expect(rows.map((r) => r.data.id)).to.deep.equal(refs);
      for (const row of rows) {
        expect(row).to.include({ type: "subscription.expired", merchant_id: merchantId });
        expect(row.queued).to.deep.equal(["relay"]);
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
