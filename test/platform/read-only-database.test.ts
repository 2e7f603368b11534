import { expect } from "chai";
import pg from "pg";
import { useTestSystem } from "../support/system.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { createPlan } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";

/**
 * A write that reaches a read-only node — a primary demoted by a failover,
 * reached for a moment through a proxy that has not noticed yet — is refused
 * by PostgreSQL with 25006 (read_only_sql_transaction). It must answer 503
 * SERVICE_UNAVAILABLE (retryable), never 500, while reads go on; once the
 * connections reach a writable node again, writes succeed without a restart.
 * The test database is made read-only (default_transaction_read_only, the
 * same refusal a standby gives) and its connections cut, as a failover does.
 */
describe("a write that reaches a read-only node", function () {
  this.timeout(60_000);

  async function onServer(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: (await infrastructure()).databaseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
  /** The setting applies to new sessions: cut this database's connections as a failover does. */
  async function readOnly(on: boolean): Promise<void> {
    await onServer(`alter database ${sys.database.name} set default_transaction_read_only = ${on ? "on" : "off"}`);
    await onServer(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${sys.database.name}' and pid <> pg_backend_pid()`);
  }

  const sys = useTestSystem({ workerGroups: [] });

  it("answers 503 SERVICE_UNAVAILABLE to writes and 200 to reads, then writes again once the node is writable", async () => {
    const merchant = await sys.createMerchant("Read-only");
    const plan = await createPlan(merchant.api);
    await readOnly(true);
    // The first requests after the cut may meet a dead pooled connection (503 too); then every write meets 25006.
    const refused = await eventually(
      async () => {
        const res = await merchant.api.post("/api/v1/subscription-plans", { name: "Refused", amount: "1", currency: "USD", interval: "MONTH" });
        expect(res.status, res.text).to.equal(503);
        const read = await merchant.api.get(`/api/v1/subscription-plans/${plan.id}`);
        return read.status === 200 ? res : undefined;
      },
      10_000,
      "reads served while writes are refused",
    );
    expect(refused.body).to.include({ error: "SERVICE_UNAVAILABLE" });
    expect(refused.text).not.to.match(/read-only|25006/);
    const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from plans where name = 'Refused'");
    expect(row!.n).to.equal(0);

    await readOnly(false);
    const created = await eventually(
      async () => {
        const res = await merchant.api.post("/api/v1/subscription-plans", { name: "Written", amount: "1", currency: "USD", interval: "MONTH" });
        expect([201, 503], res.text).to.include(res.status);
        return res.status === 201 ? res : undefined;
      },
      10_000,
      "writes succeed again",
    );
    expect(created.body.name).to.equal("Written");
  });
});
