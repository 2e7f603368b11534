import { expect } from "chai";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";

const valid = { name: "Pro", amount: "10.50", currency: "USD", interval: "MONTH" };

describe("subscription plans over REST", () => {
  let sys: TestSystem;
  let api: ApiClient;

  before(async () => {
    sys = await startTestSystem({ workerGroups: [] });
    api = (await sys.createMerchant()).api;
  });
  after(async () => sys?.close());

  it("creates a plan with defaults applied and the amount in canonical form", async () => {
    const res = await api.post("/api/v1/subscription-plans", valid);
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ name: "Pro", amount: "10.5", currency: "USD", interval: "MONTH", intervalCount: 1, trialDays: 0, status: "ACTIVE" });
    expect(res.body.metadata).to.deep.equal({});
    expect(res.body.maximumChargeAmount).to.equal(null);
    const got = await api.get(`/api/v1/subscription-plans/${res.body.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(res.body);
  });
});
