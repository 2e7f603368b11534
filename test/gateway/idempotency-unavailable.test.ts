import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";

/** With Redis unreachable, an Idempotency-Key cannot be honoured: 503, never a duplicate, never a 500. */
describe("Idempotency-Key while its store is unreachable", () => {
  const sys = useTestSystem({ workerGroups: [], env: { REDIS_URL: "redis://127.0.0.1:1" } });

  it("answers 503 SERVICE_UNAVAILABLE and creates nothing", async () => {
    const { api } = await sys.createMerchant();
    const body = {
      externalReference: "idem-down",
      planId: "00000000-0000-4000-8000-000000000000",
      walletUserId: "00000000-0000-4000-8000-000000000001",
      successUrl: "https://merchant.example/ok",
      cancelUrl: "https://merchant.example/no",
    };
    const res = await api.post("/api/v1/subscriptions", body, { "idempotency-key": "k-1" });
    expect(res.status, res.text).to.equal(503);
    expect(res.body).to.deep.include({ error: "SERVICE_UNAVAILABLE" });
    expect((await sys.sql("select count(*)::int as n from subscriptions"))[0].n).to.equal(0);
    // Without the header the request goes through to the service as usual (here: the plan is unknown).
    const plain = await api.post("/api/v1/subscriptions", body);
    expect(plain.status).to.equal(404);
    expect(plain.body.error).to.equal("PLAN_NOT_FOUND");
  });
});
