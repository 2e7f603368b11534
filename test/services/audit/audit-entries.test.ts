import { expect } from "chai";
import { type TestSystem, useTestSystem } from "../../support/system.ts";
import { createPlan, createWalletUser, subscriptionBody } from "../../support/subscriptions.ts";

const PLANS = "/api/v1/subscription-plans";
const plan = { name: "Basic", amount: "5", currency: "USD", interval: "WEEK" };

const entriesOf = (sys: TestSystem, merchantId: string) => sys.sql("select * from audit_entries where merchant_id = ? order by at, id", [merchantId]);

describe("audit entries: one per successful action, in its transaction", () => {
  const sys = useTestSystem({ workerGroups: [] });

  it("an API-key action writes exactly one entry with the key as actor and the request's origin", async () => {
    const m = await sys.createMerchant("Audited");
    const before = await entriesOf(sys, m.id);
    const res = await m.api.post(PLANS, plan, { "user-agent": "audit-test/1.0", "x-request-id": "req-audit-1" });
    expect(res.status).to.equal(201);
    const after = (await entriesOf(sys, m.id)).slice(before.length);
    expect(after).to.have.length(1);
    const e = after[0];
    expect(e).to.include({ actor_type: "api_key", actor_id: m.apiKeyId, action: "plan.create", object_type: "plan", object_id: res.body.id });
    expect(e.actor_label).to.equal(m.apiKey.slice(0, 12));
    expect(e).to.include({ user_agent: "audit-test/1.0", request_id: "req-audit-1" });
    expect(e.ip).to.be.a("string").and.not.empty;
  });

  it("a refused action writes no entry", async () => {
    const m = await sys.createMerchant("Refused");
    const created = await m.api.post(PLANS, plan);
    const before = await entriesOf(sys, m.id);
    const archived = await m.api.post(`${PLANS}/${created.body.id}/archive`);
    expect(archived.status).to.equal(200);
    const again = await m.api.post(`${PLANS}/${created.body.id}/archive`);
    const missing = await m.api.post(`${PLANS}/00000000-0000-4000-8000-000000000000/archive`);
    expect(missing.status).to.equal(404);
    const after = (await entriesOf(sys, m.id)).slice(before.length);
    expect(after.map((e: any) => e.action)).to.deep.equal(again.status < 300 ? ["plan.archive", "plan.archive"] : ["plan.archive"]);
  });

  it("a subscription create writes its entry in the create's own statement: an entry that cannot be written leaves no subscription", async () => {
    const m = await sys.createMerchant("Created");
    const planId = (await createPlan(m.api)).id;
    const user = await createWalletUser(sys);
    const created = await m.api.post("/api/v1/subscriptions", subscriptionBody(planId, user.id, { externalReference: "audited-1" }), {
      "x-request-id": "req-audit-create",
    });
    expect(created.status).to.equal(201);
    const entries = (await entriesOf(sys, m.id)).filter((e: any) => e.action === "subscription.create");
    expect(entries).to.have.length(1);
    expect(entries[0]).to.include({
      actor_type: "api_key",
      actor_id: m.apiKeyId,
      object_type: "subscription",
      object_id: created.body.subscriptionId,
      request_id: "req-audit-create",
    });

    // The log refuses this one request's entry: the create must not be half-written (subscription without its entry).
    await sys.sql(`create function audit_refuse_one() returns trigger language plpgsql as $$
      begin raise exception 'audit entry refused for the test'; end $$`);
    await sys.sql(
      "create trigger audit_refuse_one before insert on audit_entries for each row when (new.request_id = 'req-audit-refused') execute function audit_refuse_one()",
    );
    try {
      const refused = await m.api.post("/api/v1/subscriptions", subscriptionBody(planId, user.id, { externalReference: "audited-2" }), {
        "x-request-id": "req-audit-refused",
      });
      expect(refused.status).to.be.at.least(500);
      expect(await sys.sql("select id from subscriptions where merchant_id = ? and external_reference = 'audited-2'", [m.id])).to.have.length(0);
      expect(await sys.sql("select id from events where merchant_id = ? and type = 'subscription.created'", [m.id])).to.have.length(1);
    } finally {
      await sys.sql("drop trigger audit_refuse_one on audit_entries");
      await sys.sql("drop function audit_refuse_one()");
    }
  });

  it("operator actions are recorded with the operator as actor", async () => {
    const m = await sys.createMerchant("Operated");
    const key = await sys.admin.post(`/admin/v1/merchants/${m.id}/api-keys`);
    expect(key.status).to.equal(201);
    const entries = await entriesOf(sys, m.id);
    const created = entries.find((e: any) => e.action === "api_key.create" && e.object_id !== m.apiKeyId);
    expect(created).to.include({ actor_type: "operator", object_type: "api_key" });
    const merchant = entries.find((e: any) => e.action === "merchant.create");
    expect(merchant).to.include({ actor_type: "operator", object_id: m.id });
  });

  it("the database refuses to change or delete an entry", async () => {
    const m = await sys.createMerchant("Immutable");
    const [entry] = await entriesOf(sys, m.id);
    expect(entry).to.exist;
    for (const statement of ["update audit_entries set action = 'x' where id = ?", "delete from audit_entries where id = ?"]) {
      let refused: unknown;
      try {
        await sys.sql(statement, [entry.id]);
      } catch (err) {
        refused = err;
      }
      expect(String(refused)).to.match(/audit entries cannot be changed or deleted/);
    }
    let truncated: unknown;
    try {
      await sys.sql("truncate audit_entries");
    } catch (err) {
      truncated = err;
    }
    expect(String(truncated)).to.match(/cannot be changed or deleted/);
    expect(await entriesOf(sys, m.id)).to.have.length.greaterThan(0);
  });

  it("only the partition maintenance, holding the table's lock, may move strays out of the default partition", async () => {
    const conn = sys.system.orm!.em.fork();
    await sys.sql(
      "insert into audit_entries (at, actor_type, actor_id, actor_label, action, object_type) values ('2001-01-01', 'operator', 'x', 'x', 'x.y', 'x')",
    );
    let refused: unknown;
    try {
      await sys.sql("delete from audit_entries_default where at = '2001-01-01'");
    } catch (err) {
      refused = err;
    }
    expect(String(refused)).to.match(/cannot be changed or deleted/);
    const moved = await conn.transactional(async (tx) => {
      await tx.execute("select pg_advisory_xact_lock(hashtext('billing-partitions:audit_entries'))");
      return tx.execute("delete from audit_entries_default where at = '2001-01-01' returning id");
    });
    expect(moved).to.have.length(1);
    // The lock does not open the months.
    const [month] = await sys.sql("select id from audit_entries where at >= date_trunc('month', now()) limit 1");
    let kept: unknown;
    try {
      await conn.transactional(async (tx) => {
        await tx.execute("select pg_advisory_xact_lock(hashtext('billing-partitions:audit_entries'))");
        await tx.execute("delete from audit_entries where id = ?", [month.id]);
      });
    } catch (err) {
      kept = err;
    }
    expect(String(kept)).to.match(/cannot be changed or deleted/);
  });
});
