import { expect } from "chai";
import pg from "pg";
import { useTestSystem } from "../support/system.ts";
import { createPlan, createWalletUser, localUrl, subscriptionBody } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { outcomeUnknownMs } from "../../gateway/idempotency.ts";

/**
 * Found by the soak: a create answered 504 (the gateway stopped waiting) while the service went on and made the
 * subscription; the gateway had released the Idempotency-Key, and the retry with the same key met 409
 * SUBSCRIPTION_ALREADY_EXISTS: the authorization URL was lost. Now the key stays in flight until the service's own
 * deadline has surely passed, and the retry after it gets the subscription and its URL.
 */
describe("Idempotency-Key after a 504: kept in flight until the service surely stopped, then the retry runs again", function () {
  this.timeout(60_000);
  // The shortest RPC deadline (4 s); a statement may wait longer on the lock below than the deadline.
  const env = { RPC_TIMEOUT_MS: "4000", DB_CONNECT_TIMEOUT_MS: "500", DB_STATEMENT_TIMEOUT_MS: "8000" };
  const sys = useTestSystem({ workerGroups: [], env });

  it("a retry meanwhile answers 409 IDEMPOTENCY_KEY_IN_USE; after it, 201 with the subscription the first attempt made and a working URL", async () => {
    const { api } = await sys.createMerchant();
    const plan = await createPlan(api);
    const customer = await createWalletUser(sys);
    const req = subscriptionBody(plan.id, customer.id);
    const key = { "idempotency-key": "create-after-504" };
    const holdMs = outcomeUnknownMs(sys.config);
    expect(holdMs).to.equal(4000 + 500 + 8000);

    // Hold the plan's row: the subscription's insert (its foreign key takes a share lock on it) waits past the deadline.
    const holder = new pg.Client({ connectionString: sys.database.url });
    await holder.connect();
    let timedOutAt: number;
    try {
      await holder.query("begin");
      await holder.query("select id from plans where id = $1 for update", [plan.id]);
      const first = await api.post("/api/v1/subscriptions", req, key);
      timedOutAt = Date.now();
      expect(first.status, first.text).to.equal(504);
      expect(first.body.error).to.equal("TIMEOUT");

      const meanwhile = await api.post("/api/v1/subscriptions", req, key);
      expect(meanwhile.status, meanwhile.text).to.equal(409);
      expect(meanwhile.body.error).to.equal("IDEMPOTENCY_KEY_IN_USE");
    } finally {
      // The service goes on: its insert, started before the deadline, commits now.
      await holder.query("rollback").catch(() => {});
      await holder.end();
    }
    const [made] = await eventually(
      async () => {
        const rows = await sys.sql<{ id: string }>("select id from subscriptions where external_reference = ?", [req.externalReference]);
        return rows.length > 0 ? rows : undefined;
      },
      10_000,
      "the subscription the first attempt made after its 504",
    );

    const retry = await eventually(
      async () => {
        const res = await api.post("/api/v1/subscriptions", req, key);
        if (res.status === 409 && res.body.error === "IDEMPOTENCY_KEY_IN_USE") return undefined;
        return res;
      },
      holdMs + 10_000,
      "the key to be released",
    );
    expect(Date.now() - timedOutAt!, "held until the service's deadline had surely passed").to.be.at.least(holdMs - 100);
    expect(retry.status, retry.text).to.equal(201);
    expect(retry.body.subscriptionId).to.equal(made!.id);
    expect((await fetch(localUrl(sys, retry.body.authorizationUrl))).status).to.equal(200);
    // Now a final answer: the key replays it.
    const replay = await api.post("/api/v1/subscriptions", req, key);
    expect(replay.headers.get("idempotent-replayed")).to.equal("true");
    expect(replay.body).to.deep.equal(retry.body);
  });

  it("a create with a coupon whose transaction outlives the deadline rolls back before its commit: nothing is kept, and the retry redeems the coupon once", async () => {
    const { api } = await sys.createMerchant();
    const plan = await createPlan(api);
    const customer = await createWalletUser(sys);
    const coupon = await api.post("/api/v1/coupons", { name: "Late", duration: "ONCE", percentOff: "10" });
    expect(coupon.status, coupon.text).to.equal(201);
    const req = { ...subscriptionBody(plan.id, customer.id), couponId: coupon.body.id };
    const key = { "idempotency-key": "discounted-create-after-504" };
    const redeemed = async () => (await sys.sql<{ n: number }>("select times_redeemed as n from coupons where id = ?", [coupon.body.id]))[0]!.n;

    // The redemption runs first; then the subscription's insert waits on the plan's row past the deadline.
    const holder = new pg.Client({ connectionString: sys.database.url });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select id from plans where id = $1 for update", [plan.id]);
      const first = await api.post("/api/v1/subscriptions", req, key);
      expect(first.status, first.text).to.equal(504);
    } finally {
      // The service's transaction goes on past its deadline: it writes everything, then must not commit.
      await holder.query("rollback").catch(() => {});
      await holder.end();
    }
    // Its transaction is over once no session of this database is inside one (the services keep idle connections only).
    await eventually(
      async () => {
        const [open] = await sys.sql<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null",
        );
        return open!.n === 0 ? true : undefined;
      },
      10_000,
      "the late transaction to end",
    );
    expect(await sys.sql("select id from subscriptions where external_reference = ?", [req.externalReference])).to.deep.equal([]);
    expect(await redeemed()).to.equal(0);

    const retry = await eventually(
      async () => {
        const res = await api.post("/api/v1/subscriptions", req, key);
        if (res.status === 409 && res.body.error === "IDEMPOTENCY_KEY_IN_USE") return undefined;
        return res;
      },
      outcomeUnknownMs(sys.config) + 10_000,
      "the key to be released",
    );
    expect(retry.status, retry.text).to.equal(201);
    expect(await redeemed()).to.equal(1);
  });
});
