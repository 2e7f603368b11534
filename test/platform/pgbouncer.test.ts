import { expect } from "chai";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { startPgBouncer, type PgBouncerProcess } from "../support/pgbouncer-process.ts";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { createPlan, createSubscription, createWalletUser, subscriptionsRpc } from "../support/subscriptions.ts";
import { advanceBy, approvedSubscription, DAY, debitsOf, subscriptionOf, waitForCharges } from "../support/billing.ts";
import { createOrm, type Orm } from "../../services/platform/database/orm.ts";
import { poolOf, preparedStatement, runPrepared } from "../../services/platform/database/prepared.ts";
import { checkSessionBounds } from "../../services/platform/database/session-bounds.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { entities } from "../../services/entities.ts";

/**
 * The whole system through its own PgBouncer (Debian's 1.18) in transaction
 * pooling, in front of the shared PostgreSQL, with DB_PREPARED_STATEMENTS=false:
 * 8 client connections share 3 server connections, so consecutive statements
 * of one client land on different server sessions — what breaks named
 * statements and session-level state. The API (the batched and prepared
 * paths included), renewals (skip locked claims) and webhooks (the relay's
 * transaction-scoped advisory lock) run through it; the bounds the pooler
 * cannot pass on as startup parameters come from the database's settings.
 */
describe("PgBouncer in transaction pooling (DB_PREPARED_STATEMENTS=false)", function () {
  this.timeout(90_000);
  const STATEMENT_TIMEOUT_MS = 3_000;
  const IDLE_IN_TRANSACTION_MS = 30_000;
  let bouncer: PgBouncerProcess;
  let sys: TestSystem;
  let receiver: WebhookReceiver;
  let rpc: ReturnType<typeof subscriptionsRpc>;

  /** One statement on the shared server as its administrator (settings of a test database only). */
  async function onServer(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: (await infrastructure()).databaseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  before(async () => {
    bouncer = await startPgBouncer({
      serverUrl: (await infrastructure()).databaseUrl,
      poolMode: "transaction",
      poolSize: 3,
      settings: {
        // What the process sends at connect and the pooler cannot pass on: the bounds come from the database (below).
        ignore_startup_parameters: "statement_timeout,idle_in_transaction_session_timeout",
        // A client waiting for a server connection gives up (08P01 → 503) instead of waiting 120 s.
        query_wait_timeout: 5,
      },
    });
    receiver = await startWebhookReceiver();
    sys = await startTestSystem({
      env: { DB_PREPARED_STATEMENTS: "false", DB_POOL_MAX: "8", DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) },
      databaseUrl: async (database) => {
        // In production `ALTER ROLE billing IN DATABASE billing SET …`; here the test database's own settings.
        await onServer(`alter database ${database.name} set statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
        await onServer(`alter database ${database.name} set idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}`);
        return bouncer.url(database.name);
      },
    });
    expect(new URL(sys.config.databaseUrl).port).to.equal(String(bouncer.port));
    rpc = subscriptionsRpc(sys);
  });
  after(async () => {
    rpc?.close();
    await sys?.close();
    await receiver?.close();
    await bouncer?.stop();
  });

  it("serves the API: concurrent creates and reads (the one-statement create and the batched reads by id), approval", async () => {
    const merchant = await sys.createMerchant("Pooled");
    const plan = await createPlan(merchant.api, { amount: "2", interval: "MONTH" });
    const users = await Promise.all(Array.from({ length: 4 }, () => createWalletUser(sys, { USDT_TRON: "100" })));
    const created = await Promise.all(Array.from({ length: 24 }, (_, i) => createSubscription(merchant.api, plan.id, users[i % users.length]!.id)));
    const reads = await Promise.all(created.flatMap((s) => [1, 2, 3].map(() => merchant.api.get(`/api/v1/subscriptions/${s.subscriptionId}`))));
    expect(
      reads.map((r) => r.status).filter((s) => s !== 200),
      JSON.stringify(reads.find((r) => r.status !== 200)?.body),
    ).to.deep.equal([]);
    const plans = await Promise.all(Array.from({ length: 20 }, () => merchant.api.get(`/api/v1/subscription-plans/${plan.id}`)));
    expect(plans.map((r) => r.status).filter((s) => s !== 200)).to.deep.equal([]);

    const { subscriptionId } = await approvedSubscription(sys, merchant.api, rpc.client, { plan: { amount: "5", interval: "MONTH" } });
    expect((await subscriptionOf(merchant.api, subscriptionId)).status).to.equal("ACTIVE");
  });

  it("renews (the sweep's skip-locked claims, the renewal job, the charge and its settle) and delivers the webhooks (the relay's advisory lock), signed", async () => {
    const merchant = await sys.createMerchant("Pooled renewals");
    const endpoint = (await merchant.api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/renewals` })).body;
    const subs = await Promise.all(
      Array.from({ length: 3 }, () => approvedSubscription(sys, merchant.api, rpc.client, { plan: { amount: "3", interval: "DAY" } })),
    );
    await advanceBy(sys, DAY + 60);
    for (const { subscriptionId } of subs) {
      const charges = await waitForCharges(sys, subscriptionId, 2, 30_000);
      expect(charges.map((c) => c.status)).to.deep.equal(["SUCCEEDED", "SUCCEEDED"]);
      expect(await debitsOf(sys, subscriptionId), "charged once per period").to.equal(2);
    }
    const renewed = (hooks: typeof receiver.received) =>
      hooks.filter((h) => h.path === "/hooks/renewals" && JSON.parse(h.body).type === "subscription.renewed");
    await receiver.waitFor((r) => renewed(r).length >= subs.length, 30_000);
    const verifier = new Webhook(endpoint.secret);
    const ids = renewed(receiver.received).map((h) => (verifier.verify(h.body, h.headers as Record<string, string>) as { data: { id: string } }).data.id);
    expect(new Set(ids)).to.deep.equal(new Set(subs.map((s) => s.subscriptionId)));
  });

  it("bounds statements on the server although the pooler drops the startup parameters", async () => {
    expect(await checkSessionBounds(sys.system.orm!, STATEMENT_TIMEOUT_MS, createLogger("silent"))).to.deep.equal({
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_MS,
    });
    const started = Date.now();
    const err = await sys.sql(`select pg_sleep(${(STATEMENT_TIMEOUT_MS * 2) / 1000})`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(codeOf(err), String(err)).to.equal("57014");
    expect(Date.now() - started).to.be.lessThan(STATEMENT_TIMEOUT_MS * 2);
  });

  describe("without the settings", () => {
    let database: TestDatabase;
    let orm: Orm | undefined;
    before(async () => {
      database = await createTestDatabase();
    });
    afterEach(async () => {
      await orm?.close(true);
      orm = undefined;
    });
    after(async () => {
      await database?.drop();
    });

    const concurrentNamedReads = async (preparedStatements: boolean) => {
      orm = await createOrm({ databaseUrl: bouncer.url(database.name), poolMax: 8, entities, preparedStatements });
      const pool = await poolOf(orm.em);
      const statement = preparedStatement("pgbouncer-test.read", "select $1::int as n, pg_sleep(0.005)");
      const results = await Promise.allSettled(Array.from({ length: 48 }, (_, i) => runPrepared<{ n: number }>(pool, statement, [i])));
      return results.flatMap((r) => (r.status === "rejected" ? [codeOf(r.reason)] : []));
    };

    it("named statements fail through transaction pooling (why DB_PREPARED_STATEMENTS=false exists); unnamed ones do not", async () => {
      const failed = await concurrentNamedReads(true);
      expect(failed.length, "some reads meet a server session that has, or lacks, the statement").to.be.greaterThan(0);
      expect(
        failed.every((code) => code === "42P05" || code === "26000"),
        failed.join(","),
      ).to.equal(true);
      await orm!.close(true);
      expect(await concurrentNamedReads(false)).to.deep.equal([]);
    });

    it("a process whose statements the server does not bound warns at start", async () => {
      orm = await createOrm({ databaseUrl: bouncer.url(database.name), poolMax: 2, entities, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
      const warnings: string[] = [];
      const logger = createLogger("silent");
      logger.warn = ((_: unknown, message: string) => void warnings.push(message)) as typeof logger.warn;
      expect(await checkSessionBounds(orm, STATEMENT_TIMEOUT_MS, logger)).to.deep.equal({ statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });
      expect(warnings.join("\n")).to.match(/does not bound statements/);
    });
  });
});

function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}
