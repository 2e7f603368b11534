import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { approvedSubscription, chargesOf, DAY, subscriptionOf } from "../support/billing.ts";

/** The operator's sandbox clock: GET /admin/v1/sandbox/clock and POST …/advance, only when SANDBOX=true. */
describe("sandbox clock endpoints", () => {
  describe("with SANDBOX=true", () => {
    const sys = useTestSystem({ services: ["merchants", "sandbox"], workerGroups: [] });

    it("GET returns the service time; advance moves it forward by exactly the seconds asked", async () => {
      const before = await sys.admin.get("/admin/v1/sandbox/clock");
      expect(before.status).to.equal(200);
      expect(Math.abs(Date.parse(before.body.now) - Date.now())).to.be.below(5_000);
      const advanced = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 86_400 });
      expect(advanced.status).to.equal(200);
      expect(advanced.body.offsetSeconds).to.equal(86_400);
      const after = await sys.admin.get("/admin/v1/sandbox/clock");
      expect(Date.parse(after.body.now) - Date.parse(before.body.now)).to.be.within(86_400_000, 86_400_000 + 5_000);
    });

    it("400 for a move that is not forward by whole seconds; 401 without the admin key", async () => {
      for (const seconds of [0, -1, 1.5, "60"]) {
        const res = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds });
        expect(res.status, String(seconds)).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.include("seconds");
      }
      expect((await sys.http.get("/admin/v1/sandbox/clock")).status).to.equal(401);
    });
  });

  describe("an advance runs what became due at once, not at the next periodic sweep", () => {
    let rpc: ReturnType<typeof subscriptionsRpc>;
    // The periodic sweeps run once an hour here: whatever happens within seconds, the advance made it happen.
    const sys = useTestSystem({ env: { SWEEP_INTERVAL_MS: "3600000" } });
    before(async () => {
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      rpc?.close();
    });

    it("an authorization past its expiry is EXPIRED and a renewal come due is charged within seconds of the advance", async () => {
      const { api } = await sys.createMerchant();
      const renewing = await approvedSubscription(sys, api, rpc.client, { plan: { amount: "4", interval: "DAY" } });
      const plan = await createPlan(api);
      const pending = await createSubscription(api, plan.id, (await createWalletUser(sys)).id, { authorizationExpiresInMinutes: 5 });

      const advanced = await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: DAY + 60 });
      expect(advanced.status).to.equal(200);
      await eventually(
        async () => ((await subscriptionOf(api, pending.subscriptionId)).status === "EXPIRED" ? true : undefined),
        5_000,
        "expiry after the advance",
      );
      const charges = await eventually(
        async () => {
          const rows = await chargesOf(sys, renewing.subscriptionId);
          return rows.length === 2 && rows.every((c) => c.status === "SUCCEEDED") ? rows : undefined;
        },
        5_000,
        "the renewal after the advance",
      );
      expect(charges.map((c) => c.period_index)).to.deep.equal([0, 1]);
    });
  });

  describe("with SANDBOX=false", () => {
    const sys = useTestSystem({ services: ["merchants", "sandbox"], workerGroups: [], env: { SANDBOX: "false" } });

    it("both endpoints answer 404, whatever the body or the key, as if they did not exist", async () => {
      const answers = [
        await sys.admin.get("/admin/v1/sandbox/clock"),
        await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 }),
        await sys.admin.post("/admin/v1/sandbox/clock/advance", {}),
        await sys.http.get("/admin/v1/sandbox/clock"),
        await sys.http.post("/admin/v1/sandbox/clock/advance", { seconds: 60 }),
      ];
      for (const res of answers) {
        expect(res.status).to.equal(404);
        expect(res.body.error).to.equal("NOT_FOUND");
      }
      // And the business clock is the wall clock: nothing moved.
      expect((await sys.sql<{ offset_ms: string }>("select offset_ms from sandbox_clock where id = 1"))[0]!.offset_ms).to.equal("0");
    });
  });
});
