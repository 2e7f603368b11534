import { expect } from "chai";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import { recordEvent } from "../../../services/events/record-event.ts";
import { Event } from "../../../services/events/entities.ts";

describe("recordEvent (transactional outbox)", () => {
  let sys: TestSystem;
  let merchantId: string;

  before(async () => {
    sys = await startTestSystem({ gateway: true, workerGroups: [] });
    merchantId = (await sys.createMerchant()).id;
  });
  after(async () => sys?.close());

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
    const id = await ctx.em.transactional(async (em) => recordEvent(em, ctx.clock, { merchantId, type: "subscription.paused", data: { id: "sub_2", status: "PAUSED" } }).id);
    const row = await sys.context().em.findOneOrFail(Event, id);
    expect(row).to.include({ merchantId, type: "subscription.paused", relayedAt: null });
    expect(row.data).to.deep.equal({ id: "sub_2", status: "PAUSED" });
    expect(row.createdAt.getTime()).to.be.at.least(before.getTime());
  });
});
