import { expect } from "chai";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { createOrm, type Orm } from "../../services/platform/database/orm.ts";
import { monthlyPartitionedTableSql, monthStart, partitionName } from "../../services/platform/database/monthly-partitions.ts";
import { entities } from "../../services/entities.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { loadConfig } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import type { RetainedTable } from "../../services/retention/retention-registry.ts";
import { sweepRetention } from "../../services/retention/sweep-retention.ts";
import { withDatabase } from "../support/database.ts";

const DAY_MS = 86_400_000;

/** Migration 0032 on a database that already holds rows, old and new: every row survives, in its month. */
describe("migration 0032 (monthly partitions) on a database with rows", () => {
  const name = `billing_mig_${randomBytes(4).toString("hex")}`;
  let admin: pg.Client;
  let orm: Orm;
  let db: pg.Client;

  before(async () => {
    const { databaseUrl } = await infrastructure();
    admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    orm = await createOrm({ databaseUrl: withDatabase(databaseUrl, name), poolMax: 1, entities });
    await orm.migrator.up({ to: "0030-payout-indexes" });
    db = new pg.Client({ connectionString: withDatabase(databaseUrl, name) });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await orm?.close();
    await admin?.query(`drop database if exists ${name} with (force)`);
    await admin?.end();
  });

  it("keeps every event, delivery, attempt and email, each in its month, and the feed sequence goes on", async () => {
    const merchant = randomUUID();
    const endpoint = randomUUID();
    const now = new Date();
    const old = new Date(now.getTime() - 200 * DAY_MS);
    await db.query("insert into merchants (id, name, created_at) values ($1, 'm', now())", [merchant]);
    await db.query(
      `insert into webhook_endpoints (id, merchant_id, url, enabled_events, status, secret_ciphertext, created_at, updated_at)
       values ($1, $2, 'https://example.com', '["*"]', 'ENABLED', 'x', now(), now())`,
      [endpoint, merchant],
    );
    const events: { id: string; at: Date }[] = [];
    for (const at of [old, now]) {
      const id = randomUUID();
      await db.query("insert into events (id, merchant_id, type, data, created_at, relayed_at) values ($1, $2, 'plan.created', '{}', $3, $3)", [
        id,
        merchant,
        at,
      ]);
      const delivery = randomUUID();
      await db.query(
        `insert into webhook_deliveries (id, merchant_id, event_id, endpoint_id, event_seq, status, created_at, updated_at)
         values ($1, $2, $3, $4, 1, 'SUCCEEDED', $5, $5)`,
        [delivery, merchant, id, endpoint, new Date(at.getTime() + 1000)],
      );
      await db.query(
        `insert into webhook_delivery_attempts (id, delivery_id, endpoint_id, event_id, attempt_number, attempted_at, outcome)
         values ($1, $2, $3, $4, 1, $5, 'SUCCEEDED')`,
        [randomUUID(), delivery, endpoint, id, new Date(at.getTime() + 2000)],
      );
      await db.query(
        `insert into customer_emails (id, event_id, merchant_id, recipient, kind, subject, text_body, html_body, next_attempt_at, created_at, updated_at)
         values ($1, $2, $3, 'a@example.com', 'receipt', 's', 't', 'h', now(), now(), now())`,
        [randomUUID(), id, merchant],
      );
      events.push({ id, at });
    }
    const seqBefore = (await db.query("select max(seq)::int as n from events")).rows[0].n;

    await orm.migrator.up();

    for (const e of events) {
      const month = partitionName("events", monthStart(e.at));
      const row = (await db.query("select tableoid::regclass::text as p from events where id = $1", [e.id])).rows[0];
      expect(row?.p).to.equal(month);
      const delivery = (await db.query("select tableoid::regclass::text as p, event_created_at from webhook_deliveries where event_id = $1", [e.id])).rows[0];
      expect(delivery.p).to.equal(partitionName("webhook_deliveries", monthStart(e.at)));
      expect(new Date(delivery.event_created_at).getTime()).to.equal(e.at.getTime());
      const attempt = (await db.query("select tableoid::regclass::text as p from webhook_delivery_attempts where event_id = $1", [e.id])).rows[0];
      expect(attempt.p).to.equal(partitionName("webhook_delivery_attempts", monthStart(e.at)));
    }
    expect((await db.query("select count(*)::int as n from customer_emails")).rows[0].n).to.equal(2);
    // Three months ahead exist; the sequence carries on past the rows moved.
    const ahead = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 3, 1));
    expect((await db.query("select to_regclass($1) is not null as found", [partitionName("events", ahead)])).rows[0].found).to.equal(true);
    const next = await db.query(
      "insert into events (id, merchant_id, type, data, created_at) values ($1, $2, 'plan.created', '{}', now()) returning seq::int as seq",
      [randomUUID(), merchant],
    );
    expect(next.rows[0].seq).to.be.greaterThan(seqBefore);
    // No foreign key points into a partitioned table any more (a month could not be dropped).
    const into = await db.query(
      "select conname from pg_constraint where contype = 'f' and confrelid in ('events'::regclass, 'webhook_deliveries'::regclass, 'webhook_delivery_attempts'::regclass)",
    );
    expect(into.rows).to.deep.equal([]);
  });

  it("monthlyPartitionedTableSql makes a table the sweep can keep (key `at`, <table>_YYYY_MM and a default), registered in one line", async () => {
    await db.query(
      monthlyPartitionedTableSql({
        table: "retention_probe_entries",
        column: "at",
        columns: "id uuid not null, at timestamptz not null, action text not null, primary key (id, at)",
      }),
    );
    const parts = (
      await db.query(
        "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'retention_probe_entries'::regclass order by 1",
      )
    ).rows.map((r: { relname: string }) => r.relname);
    const month = monthStart(new Date());
    expect(parts).to.include.members([partitionName("retention_probe_entries", month), "retention_probe_entries_default"]);
    expect(parts).to.have.length(5);
    await db.query("insert into retention_probe_entries (id, at, action) values ($1, now(), 'x')", [randomUUID()]);

    // Registered in one line, the sweep keeps it like the others: a year on, the months ahead exist.
    const audit: RetainedTable = { table: "retention_probe_entries", column: "at", retentionDays: (r) => r.auditEntriesDays, neededRows: [] };
    const yearOn = new Date(Date.now() + 450 * DAY_MS);
    const res = await sweepRetention({ em: orm.em.fork(), clock: new ManualClock(yearOn) }, loadConfig({}).retention, createLogger("silent"), [audit]);
    expect(res.tables[0]!.created).to.include(partitionName("retention_probe_entries", monthStart(yearOn)));
    // Dropping follows the wall clock when the service clock runs ahead: a simulated year drops nothing.
    expect(res.tables[0]!.dropped).to.deep.equal([]);
  });
});
