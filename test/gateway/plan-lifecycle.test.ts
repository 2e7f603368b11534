import { expect } from "chai";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc } from "../support/subscriptions.ts";
import { approvedSubscription, changeBody } from "../support/change-sessions.ts";
import { advanceBy, DAY, waitForCharges } from "../support/billing.ts";

const PLANS = "/api/v1/subscription-plans";

describe("plan lifecycle: edit, archive, unarchive", () => {
  let api: ApiClient;
  let other: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;

  const sys = useTestSystem();
  before(async () => {
    api = (await sys.createMerchant()).api;
    other = (await sys.createMerchant("Other")).api;
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
  });

  const patch = (path: string, body: unknown, client = api) => client.request("PATCH", path, { body });
  const eventTypes = async (planId: string) =>
    (await sys.sql<{ type: string }>("select type from events where data->>'id' = ? order by seq", [planId])).map((r) => r.type);

  describe("PATCH", () => {
    it("changes name, description, externalReference and metadata, keeps the price, records plan.updated", async () => {
      const plan = await createPlan(api, { description: "old", externalReference: "ref-1", metadata: { a: 1 } });
      const res = await patch(`${PLANS}/${plan.id}`, { name: "Renamed", description: "new words", externalReference: "ref-2", metadata: { b: [1, "x"] } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({
        id: plan.id,
        name: "Renamed",
        description: "new words",
        externalReference: "ref-2",
        amount: plan.amount,
        currency: "USD",
        status: "ACTIVE",
      });
      expect(res.body.metadata).to.deep.equal({ b: [1, "x"] });
      expect((await api.get(`${PLANS}/${plan.id}`)).body).to.deep.equal(res.body);
      expect(await eventTypes(plan.id)).to.deep.equal(["plan.created", "plan.updated"]);
      const [event] = await sys.sql("select data from events where data->>'id' = ? and type = 'plan.updated'", [plan.id]);
      expect(event.data).to.deep.equal(res.body);
    });

    it("clears description and externalReference with null and leaves absent fields alone", async () => {
      const plan = await createPlan(api, { description: "d", externalReference: "r", metadata: { keep: true } });
      const res = await patch(`${PLANS}/${plan.id}`, { description: null, externalReference: null });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ description: null, externalReference: null, name: plan.name });
      expect(res.body.metadata).to.deep.equal({ keep: true });
    });

    for (const [field, value] of [
      ["amount", "99"],
      ["currency", "EUR"],
      ["interval", "YEAR"],
      ["intervalCount", 2],
      ["trialDays", 7],
      ["maximumChargeAmount", "100"],
    ] as const) {
      it(`refuses ${field} with a 400 naming it and pointing to a new plan and a change session`, async () => {
        const plan = await createPlan(api);
        const res = await patch(`${PLANS}/${plan.id}`, { name: "Also renamed", [field]: value });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal("INVALID_REQUEST");
        expect(res.body.message).to.contain(field).and.to.contain("new plan").and.to.contain("change session");
        expect(res.body.details.map((d: { field: string }) => d.field)).to.include(field);
        expect((await api.get(`${PLANS}/${plan.id}`)).body.name).to.equal("Pro");
      });
    }

    it("validates like create: empty name, too long text, unknown fields, empty body", async () => {
      const plan = await createPlan(api);
      for (const [body, field] of [
        [{ name: "" }, "name"],
        [{ name: "x".repeat(201) }, "name"],
        [{ description: "x".repeat(2001) }, "description"],
        [{ externalReference: "x".repeat(201) }, "externalReference"],
        [{ metadata: [] }, "metadata"],
        [{ colour: "red" }, "colour"],
        [{}, "body"],
      ] as const) {
        const res = await patch(`${PLANS}/${plan.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.contain(field);
      }
    });

    it("answers 404 for another merchant's plan and for an unknown id, and changes nothing", async () => {
      const plan = await createPlan(api);
      expect((await patch(`${PLANS}/${plan.id}`, { name: "Mine now" }, other)).status).to.equal(404);
      expect((await patch(`${PLANS}/00000000-0000-4000-8000-000000000000`, { name: "x" })).status).to.equal(404);
      expect((await patch(`${PLANS}/not-a-uuid`, { name: "x" })).body.error).to.equal("PLAN_NOT_FOUND");
      expect((await api.get(`${PLANS}/${plan.id}`)).body.name).to.equal("Pro");
    });

    it("the database refuses a price update whoever tries it (the trigger behind the cache rule)", async () => {
      const plan = await createPlan(api);
      let error: unknown;
      try {
        await sys.sql("update plans set amount = 1 where id = ?", [plan.id]);
      } catch (err) {
        error = err;
      }
      expect(String(error)).to.contain("immutable");
      expect((await api.get(`${PLANS}/${plan.id}`)).body.amount).to.equal(plan.amount);
    });
  });

  describe("archive and unarchive", () => {
    it("archives (idempotent, archivedAt set, one event), filters the list, unarchives", async () => {
      const plan = await createPlan(api);
      const first = await api.post(`${PLANS}/${plan.id}/archive`);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.status).to.equal("ARCHIVED");
      expect(new Date(first.body.archivedAt).toISOString()).to.equal(first.body.archivedAt);
      const again = await api.post(`${PLANS}/${plan.id}/archive`);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(first.body);

      const archived = await api.get(`${PLANS}?status=ARCHIVED&limit=100`);
      expect(archived.body.data.map((p: { id: string }) => p.id)).to.include(plan.id);
      expect(archived.body.data.every((p: { status: string }) => p.status === "ARCHIVED")).to.equal(true);
      const active = await api.get(`${PLANS}?status=ACTIVE&limit=100`);
      expect(active.body.data.map((p: { id: string }) => p.id)).not.to.include(plan.id);
      expect((await api.get(`${PLANS}?status=GONE`)).status).to.equal(400);

      const back = await api.post(`${PLANS}/${plan.id}/unarchive`);
      expect(back.status).to.equal(200);
      expect(back.body).to.include({ status: "ACTIVE", archivedAt: null });
      expect((await api.post(`${PLANS}/${plan.id}/unarchive`)).body.status).to.equal("ACTIVE");
      expect(await eventTypes(plan.id)).to.deep.equal(["plan.created", "plan.archived", "plan.unarchived"]);
      expect((await api.get(`${PLANS}?status=ACTIVE&limit=100`)).body.data.map((p: { id: string }) => p.id)).to.include(plan.id);
    });

    it("another merchant cannot archive the plan (404)", async () => {
      const plan = await createPlan(api);
      expect((await other.post(`${PLANS}/${plan.id}/archive`)).status).to.equal(404);
      expect((await other.post(`${PLANS}/${plan.id}/unarchive`)).status).to.equal(404);
      expect((await api.get(`${PLANS}/${plan.id}`)).body.status).to.equal("ACTIVE");
    });

    it("refuses new subscriptions and change sessions on an archived plan with 409 PLAN_ARCHIVED; existing ones keep renewing", async () => {
      const plan = await createPlan(api, { interval: "DAY" });
      const target = await createPlan(api, { name: "Target" });
      const user = await createWalletUser(sys, { USDT_TRON: "1000" });
      const subscriptionId = await approvedSubscription(api, rpc.client, plan.id, user.id);
      await api.post(`${PLANS}/${plan.id}/archive`);
      await api.post(`${PLANS}/${target.id}/archive`);

      const created = await api.post("/api/v1/subscriptions", {
        externalReference: "after-archive",
        planId: plan.id,
        walletUserId: user.id,
        successUrl: "https://merchant.example/ok",
        cancelUrl: "https://merchant.example/no",
      });
      expect(created.status, created.text).to.equal(409);
      expect(created.body.error).to.equal("PLAN_ARCHIVED");
      expect(created.body.message).to.contain("planId");

      const change = await api.post(`/api/v1/subscriptions/${subscriptionId}/change-sessions`, changeBody(target.id));
      expect(change.status, change.text).to.equal(409);
      expect(change.body.error).to.equal("PLAN_ARCHIVED");

      // The subscription on the archived plan renews as before.
      await advanceBy(sys, DAY + 60);
      const charges = await waitForCharges(sys, subscriptionId, 2);
      expect(charges.filter((c) => c.status === "SUCCEEDED")).to.have.length(2);

      // Unarchived, it is offered again.
      await api.post(`${PLANS}/${plan.id}/unarchive`);
      await createSubscription(api, plan.id, user.id);
    });
  });
});
