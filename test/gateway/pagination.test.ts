import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";

const PLANS = "/api/v1/subscription-plans";

describe("keyset pagination (plans list)", () => {
  let api: ApiClient;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant()).api;
    for (let i = 0; i < 25; i++) {
      const res = await api.post(PLANS, { name: `p${i}`, amount: "1", currency: "USD", interval: "DAY", externalReference: `r${i}` });
      expect(res.status).to.equal(201);
    }
  });

  it("defaults to 20, newest first, with hasMore and nextCursor", async () => {
    const page = await api.get(PLANS);
    expect(page.status).to.equal(200);
    expect(page.body.data).to.have.length(20);
    expect(page.body.hasMore).to.equal(true);
    expect(page.body.nextCursor).to.be.a("string");
    expect(page.body.data[0].name).to.equal("p24");
    const last = await api.get(`${PLANS}?cursor=${page.body.nextCursor}`);
    expect(last.body.data).to.have.length(5);
    expect(last.body.hasMore).to.equal(false);
    expect(last.body.nextCursor).to.equal(null);
  });

  it("has no duplicates or gaps across pages while rows are inserted", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    do {
      const res: any = await api.get(`${PLANS}?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).to.equal(200);
      seen.push(...res.body.data.map((p: { externalReference: string }) => p.externalReference));
      cursor = res.body.nextCursor;
      // New rows arrive between pages; they are newer, so they never shift later pages.
      await api.post(PLANS, { name: "late", amount: "1", currency: "USD", interval: "DAY", externalReference: `late${inserted++}` });
    } while (cursor);
    const original = seen.filter((r) => r.startsWith("r"));
    expect(original).to.deep.equal(Array.from({ length: 25 }, (_, i) => `r${24 - i}`));
    expect(new Set(seen).size).to.equal(seen.length);
  });

  it("validates limit (1..100) and cursor", async () => {
    expect((await api.get(`${PLANS}?limit=1`)).body.data).to.have.length(1);
    expect((await api.get(`${PLANS}?limit=100`)).status).to.equal(200);
    for (const limit of ["0", "101", "abc", "-1"]) {
      const res = await api.get(`${PLANS}?limit=${limit}`);
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal("INVALID_REQUEST");
      expect(res.body.message).to.contain("limit");
    }
    const bad = await api.get(`${PLANS}?cursor=garbage`);
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.contain("cursor");
  });

  it("answers 400, never 500, for a forged cursor that decodes but cannot be a row key, on every list", async () => {
    const forge = (key: unknown[]) => Buffer.from(JSON.stringify(key)).toString("base64url");
    const uuid = "00000000-0000-4000-8000-000000000000";
    const forged = [
      forge(["2020-01-01T00:00:00.000Z", "-".repeat(36)]),
      forge(["2020-01-01T00:00:00.000Z", "0".repeat(36)]),
      forge(["-271821-04-20T00:00:00.000Z", uuid]),
      forge(["+275760-09-13T00:00:00.000Z", uuid]),
      forge([0, uuid]),
    ];
    const lists = [PLANS, "/api/v1/events", "/api/v1/webhook-endpoints", "/api/v1/subscriptions", "/api/v1/payment-orders"];
    for (const list of lists) {
      for (const cursor of forged) {
        const res = await api.get(`${list}?cursor=${cursor}`);
        expect(res.status, `${list} ${Buffer.from(cursor, "base64url").toString()}`).to.equal(400);
        expect(res.body).to.include({ error: "INVALID_REQUEST" });
        expect(res.body.message).to.contain("cursor");
      }
    }
  });

  it("costs one index range scan whatever the table size (keyset, never OFFSET)", async () => {
    const merchant = (await sys.sql("select merchant_id from plans limit 1"))[0].merchant_id;
    const plan = await sys.sql(
      "explain (format json) select * from plans where merchant_id = ? and (created_at < now() or (created_at = now() and id < ?)) order by created_at desc, id desc limit 21",
      [merchant, "00000000-0000-4000-8000-000000000000"],
    );
    expect(JSON.stringify(plan)).to.contain("plans_merchant_created_idx");
  });
});
