import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";

const valid = { name: "Pro", amount: "10.50", currency: "USD", interval: "MONTH" };
const PLANS = "/api/v1/subscription-plans";

describe("subscription plans over REST", () => {
  let api: ApiClient;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant()).api;
  });

  async function expectInvalid(body: Record<string, unknown>, field: string) {
    const res = await api.post(PLANS, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error).to.equal("INVALID_REQUEST");
    expect(res.body.message).to.contain(field);
    return res;
  }

  async function expectCreated(body: Record<string, unknown>) {
    const res = await api.post(PLANS, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  describe("create", () => {
    it("applies defaults and returns the amount in canonical form", async () => {
      const plan = await expectCreated(valid);
      expect(plan).to.include({
        object: "plan",
        name: "Pro",
        amount: "10.5",
        currency: "USD",
        interval: "MONTH",
        intervalCount: 1,
        trialDays: 0,
        status: "ACTIVE",
      });
      expect(plan.metadata).to.deep.equal({});
      expect(plan.maximumChargeAmount).to.equal(null);
      expect(plan.externalReference).to.equal(null);
      expect(plan.description).to.equal(null);
      expect(plan.id).to.match(/^[0-9a-f-]{36}$/);
      expect(new Date(plan.createdAt).toISOString()).to.equal(plan.createdAt);
      const got = await api.get(`${PLANS}/${plan.id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(plan);
    });

    it("stores every field of the spec and returns it", async () => {
      const plan = await expectCreated({
        externalReference: "gold-2026",
        name: "Gold",
        description: "All features",
        amount: "99.990000",
        currency: "EUR",
        interval: "YEAR",
        intervalCount: 2,
        trialDays: 14,
        maximumChargeAmount: "150.00",
        metadata: { tier: 3, nested: { a: [1, "x"] }, big: 12345678901234567890 },
      });
      expect(plan).to.include({
        externalReference: "gold-2026",
        description: "All features",
        amount: "99.99",
        currency: "EUR",
        interval: "YEAR",
        intervalCount: 2,
        trialDays: 14,
        maximumChargeAmount: "150",
      });
      expect(plan.metadata).to.deep.equal({ tier: 3, nested: { a: [1, "x"] }, big: 12345678901234567890 });
    });

    it("treats 10.50 and 10.5 as the same amount", async () => {
      const a = await expectCreated({ ...valid, amount: "10.50" });
      const b = await expectCreated({ ...valid, amount: "10.5" });
      expect(a.amount).to.equal(b.amount);
      // A free plan (issue 25): amount 0, however it is spelled, comes back as "0".
      expect((await expectCreated({ ...valid, amount: "0.000" })).amount).to.equal("0");
      const leading = await expectCreated({ ...valid, amount: "007.10" });
      expect(leading.amount).to.equal("7.1");
    });

    it("accepts 18 fraction digits exactly and refuses 19", async () => {
      const plan = await expectCreated({ ...valid, amount: "0.123456789012345678" });
      expect(plan.amount).to.equal("0.123456789012345678");
      await expectInvalid({ ...valid, amount: "0.1234567890123456789" }, "amount");
    });

    it("refuses amounts outside the pattern", async () => {
      for (const amount of ["-1", "1.", ".5", "1e3", "1,00", " 1", "abc", ""]) {
        await expectInvalid({ ...valid, amount }, "amount");
      }
      await expectInvalid({ ...valid, amount: 10.5 }, "amount");
    });

    it("refuses an amount too large to store with 400, not 500", async () => {
      const res = await expectInvalid({ ...valid, amount: "100000000000000000000" }, "amount");
      expect(res.body.message).to.contain("10^20");
      await expectInvalid({ ...valid, amount: "9".repeat(200) }, "amount");
    });

    it("refuses an amount that could never be charged: one that overflows once a charge rounds it up (issue 21)", async () => {
      const ok = await expectCreated({ ...valid, amount: "99999999999999999999" });
      expect(ok.amount).to.equal("99999999999999999999");
      // Storable as a plan, but 10^20 once rounded up to the 6 decimals of USDT: no charge could hold it.
      for (const amount of ["99999999999999999999.999999999999999999", "99999999999999999999.000000000000000001"]) {
        const res = await expectInvalid({ ...valid, amount }, "amount");
        expect(res.body.message).to.equal(
          "amount: must be at most 99999999999999999999: a charge rounds it up to the paying asset's smallest unit and must stay below 10^20",
        );
      }
    });

    it("enforces name, externalReference and description lengths at the bound and one past", async () => {
      await expectCreated({ ...valid, name: "n".repeat(200) });
      await expectInvalid({ ...valid, name: "n".repeat(201) }, "name");
      await expectInvalid({ ...valid, name: "" }, "name");
      await expectCreated({ ...valid, externalReference: "r".repeat(200) });
      await expectInvalid({ ...valid, externalReference: "r".repeat(201) }, "externalReference");
      await expectCreated({ ...valid, description: "d".repeat(2000) });
      await expectInvalid({ ...valid, description: "d".repeat(2001) }, "description");
    });

    it("counts lengths in characters, not UTF-16 units (200 emoji are 200 characters)", async () => {
      const plan = await expectCreated({ ...valid, name: "😀".repeat(200), externalReference: "é😀".repeat(100), description: "😀".repeat(2000) });
      expect(plan.name).to.equal("😀".repeat(200));
      await expectInvalid({ ...valid, name: "😀".repeat(201) }, "name");
      await expectInvalid({ ...valid, externalReference: "😀".repeat(201) }, "externalReference");
      await expectInvalid({ ...valid, description: "😀".repeat(2001) }, "description");
    });

    it("enforces intervalCount 1..365 and trialDays 0..365", async () => {
      await expectCreated({ ...valid, intervalCount: 1 });
      await expectCreated({ ...valid, intervalCount: 365 });
      await expectInvalid({ ...valid, intervalCount: 0 }, "intervalCount");
      await expectInvalid({ ...valid, intervalCount: 366 }, "intervalCount");
      await expectInvalid({ ...valid, intervalCount: 1.5 }, "intervalCount");
      await expectInvalid({ ...valid, intervalCount: "2" }, "intervalCount");
      await expectCreated({ ...valid, trialDays: 0 });
      await expectCreated({ ...valid, trialDays: 365 });
      await expectInvalid({ ...valid, trialDays: -1 }, "trialDays");
      await expectInvalid({ ...valid, trialDays: 366 }, "trialDays");
    });

    it("accepts only the documented intervals and currencies", async () => {
      for (const interval of ["DAY", "WEEK", "MONTH", "YEAR"]) await expectCreated({ ...valid, interval });
      await expectInvalid({ ...valid, interval: "month" }, "interval");
      await expectInvalid({ ...valid, interval: "QUARTER" }, "interval");
      const res = await expectInvalid({ ...valid, currency: "XYZ" }, "currency");
      expect(res.body.message).to.contain("USD");
    });

    it("requires name, amount, currency and interval", async () => {
      for (const field of ["name", "amount", "currency", "interval"]) {
        const body: Record<string, unknown> = { ...valid };
        delete body[field];
        const res = await expectInvalid(body, field);
        expect(res.body.details.some((d: { field: string; rule: string }) => d.field === field && d.rule === "required")).to.equal(true);
      }
    });

    it("rejects unknown top-level fields but keeps metadata free-form", async () => {
      await expectInvalid({ ...valid, colour: "red" }, "colour");
      await expectInvalid({ ...valid, metadata: "not an object" }, "metadata");
      await expectInvalid({ ...valid, metadata: [1, 2] }, "metadata");
      const plan = await expectCreated({ ...valid, metadata: { anything: { goes: true } } });
      expect(plan.metadata).to.deep.equal({ anything: { goes: true } });
    });

    it("validates maximumChargeAmount: pattern, and not below amount", async () => {
      await expectInvalid({ ...valid, maximumChargeAmount: "abc" }, "maximumChargeAmount");
      const res = await expectInvalid({ ...valid, amount: "10", maximumChargeAmount: "9.99" }, "maximumChargeAmount");
      expect(res.body.message).to.contain("amount");
      const equal = await expectCreated({ ...valid, amount: "10", maximumChargeAmount: "10.00" });
      expect(equal.maximumChargeAmount).to.equal("10");
    });

    it("writes nothing when the request is invalid", async () => {
      const before = await sys.sql("select count(*)::int as n from plans");
      await expectInvalid({ ...valid, amount: "10", maximumChargeAmount: "1" }, "maximumChargeAmount");
      await expectInvalid({ ...valid, trialDays: 999 }, "trialDays");
      const after = await sys.sql("select count(*)::int as n from plans");
      expect(after[0].n).to.equal(before[0].n);
    });

    it("records a plan.created event in the same transaction", async () => {
      const plan = await expectCreated({ ...valid, name: "Evented" });
      const rows = await sys.sql("select type, data from events where type = 'plan.created' and data->>'id' = ?", [plan.id]);
      expect(rows).to.have.length(1);
      expect(rows[0].data).to.deep.equal(plan);
    });
  });

  describe("read", () => {
    it("answers 404 PLAN_NOT_FOUND for an unknown id and for a non-uuid id", async () => {
      const unknown = await api.get(`${PLANS}/00000000-0000-4000-8000-000000000000`);
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.include({ error: "PLAN_NOT_FOUND" });
      expect(unknown.body.message).to.be.a("string");
      const garbage = await api.get(`${PLANS}/not-a-uuid`);
      expect(garbage.status).to.equal(404);
      expect(garbage.body.error).to.equal("PLAN_NOT_FOUND");
    });

    it("filters the list by externalReference, currency and interval", async () => {
      const m = await sys.createMerchant();
      await m.api.post(PLANS, { ...valid, externalReference: "a", currency: "USD", interval: "MONTH" });
      await m.api.post(PLANS, { ...valid, externalReference: "b", currency: "EUR", interval: "MONTH" });
      await m.api.post(PLANS, { ...valid, externalReference: "c", currency: "EUR", interval: "YEAR" });
      const eur = await m.api.get(`${PLANS}?currency=EUR`);
      expect(eur.body.data.map((p: { externalReference: string }) => p.externalReference)).to.deep.equal(["c", "b"]);
      const yearly = await m.api.get(`${PLANS}?currency=EUR&interval=YEAR`);
      expect(yearly.body.data.map((p: { externalReference: string }) => p.externalReference)).to.deep.equal(["c"]);
      const byRef = await m.api.get(`${PLANS}?externalReference=a`);
      expect(byRef.body.data).to.have.length(1);
      expect(byRef.body.data[0].currency).to.equal("USD");
      const bad = await m.api.get(`${PLANS}?interval=FORTNIGHT`);
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.contain("interval");
      const unknownParam = await m.api.get(`${PLANS}?sort=asc`);
      expect(unknownParam.status).to.equal(400);
      expect(unknownParam.body.message).to.contain("sort");
    });
  });
});
