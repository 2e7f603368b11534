import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { emitEvents } from "../support/events.ts";

describe("events API (polling)", () => {
  let merchant: { id: string; api: ApiClient };
  let other: { id: string; api: ApiClient };
  let ids: string[];

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    merchant = await sys.createMerchant("Poller");
    other = await sys.createMerchant("Other");
    ids = [
      ...(await emitEvents(sys, merchant.id, 3, "subscription.created", (i) => ({ id: `sub_${i}`, status: "PENDING_AUTHORIZATION" }))),
      ...(await emitEvents(sys, merchant.id, 2, "subscription.activated", (i) => ({ id: `sub_${i}`, status: "ACTIVE" }))),
    ];
    await emitEvents(sys, other.id, 2, "subscription.created");
  });

  it("returns an event: id, type, createdAt and the object after the change", async () => {
    const res = await merchant.api.get(`/api/v1/events/${ids[3]}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ id: ids[3], object: "event", type: "subscription.activated", data: { id: "sub_0", status: "ACTIVE" } });
    expect(new Date(res.body.createdAt).toISOString()).to.equal(res.body.createdAt);
  });

  it("pages through the merchant's own events, newest first, without gaps or repeats", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { data: { id: string }[]; hasMore: boolean; nextCursor: string | null } } = await merchant.api.get(
        `/api/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(res.status).to.equal(200);
      expect(res.body.data.length).to.be.at.most(2);
      seen.push(...res.body.data.map((e) => e.id));
      cursor = res.body.nextCursor;
      expect(res.body.hasMore).to.equal(cursor !== null);
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    const expected = await sys.sql<{ id: string }>("select id from events where merchant_id = ? order by created_at desc, id desc", [merchant.id]);
    expect(seen).to.deep.equal(expected.map((r) => r.id));
    expect([...seen].sort()).to.deep.equal([...ids].sort());
  });

  it("filters by type and by createdAfter (strictly after)", async () => {
    const activated = await merchant.api.get("/api/v1/events?type=subscription.activated");
    expect(activated.body.data.map((e: { id: string }) => e.id)).to.have.members([ids[4], ids[3]]);
    const third = await merchant.api.get(`/api/v1/events/${ids[2]}`);
    const after = await merchant.api.get(`/api/v1/events?createdAfter=${encodeURIComponent(third.body.createdAt)}`);
    const expected = (
      await sys.sql<{ id: string }>("select id from events where merchant_id = ? and created_at > ? order by created_at desc, id desc", [
        merchant.id,
        third.body.createdAt,
      ])
    ).map((r) => r.id);
    expect(after.body.data.map((e: { id: string }) => e.id)).to.deep.equal(expected);
    expect(expected).to.not.include(ids[2]);
    const both = await merchant.api.get(`/api/v1/events?type=subscription.created&createdAfter=${encodeURIComponent("2000-01-01T00:00:00Z")}`);
    expect(both.body.data).to.have.length(3);
  });

  it("never shows another merchant's events (404 by id, absent from lists)", async () => {
    const theirs = await other.api.get("/api/v1/events");
    expect(theirs.body.data).to.have.length(2);
    expect(theirs.body.data.map((e: { id: string }) => e.id)).to.not.include.members(ids);
    const res = await other.api.get(`/api/v1/events/${ids[0]}`);
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ error: "EVENT_NOT_FOUND", message: `event ${ids[0]} not found (events are kept for 90 days)` });
    expect((await merchant.api.get("/api/v1/events/not-a-uuid")).status).to.equal(404);
  });

  it("rejects bad filters with 400 naming the parameter", async () => {
    for (const [query, field] of [
      ["type=subscription.exploded", "type"],
      ["createdAfter=yesterday", "createdAfter"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["cursor=garbage", "cursor"],
      ["colour=blue", "colour"],
    ]) {
      const res = await merchant.api.get(`/api/v1/events?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.message, query).to.include(field!);
    }
  });

  it("takes any representable RFC 3339 createdAfter without a 500: before 1970 is no lower bound; year 0000 or a leap second is a 400", async () => {
    for (const instant of ["0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2000-01-01T00:00:00+14:00"]) {
      const res = await merchant.api.get(`/api/v1/events?createdAfter=${encodeURIComponent(instant)}`);
      expect(res.status, instant).to.equal(200);
      expect(res.body.data, instant).to.have.length(5);
    }
    // Every spelling is in test/gateway/date-time-input.test.ts.
    for (const instant of ["0000-01-01T00:00:00Z", "2016-12-31T23:59:60Z"]) {
      const res = await merchant.api.get(`/api/v1/events?createdAfter=${encodeURIComponent(instant)}`);
      expect(res.status, instant).to.equal(400);
      expect(res.body).to.include({ error: "INVALID_REQUEST" });
      expect(res.body.message).to.match(/^createdAfter: /);
    }
  });

  it("requires an API key", async () => {
    expect((await sys.http.get("/api/v1/events")).status).to.equal(401);
    expect((await sys.http.get(`/api/v1/events/${ids[0]}`)).status).to.equal(401);
    expect((await sys.http.post("/api/v1/webhook-endpoints", { url: "https://example.com" })).status).to.equal(401);
  });
});
