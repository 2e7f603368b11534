import { expect } from "chai";
import { ConfigError, loadConfig, TEST_DEPOSIT_XPUBS } from "../../services/platform/config.ts";

describe("config", () => {
  it("has defaults that work on a developer machine", () => {
    const c = loadConfig({});
    expect(c.port).to.equal(3000);
    expect(c.databaseUrl).to.equal("postgres://postgres@127.0.0.1:5432/billing");
    expect(c.redisUrl).to.equal("redis://127.0.0.1:6379");
    expect(c.publicBaseUrl).to.equal("http://localhost:3000");
    expect(c.adminApiKey).to.equal(undefined);
    expect(c.sandbox).to.equal(true);
    expect(c.apiKeyMode).to.equal("test");
    expect(Object.isFrozen(c)).to.equal(true);
  });

  it("bounds database and RPC waits (DB_STATEMENT_TIMEOUT_MS, DB_CONNECT_TIMEOUT_MS, RPC_TIMEOUT_MS) and reads RECONCILE_INTERVAL_MS", () => {
    const c = loadConfig({});
    expect([c.dbStatementTimeoutMs, c.dbConnectTimeoutMs, c.rpcTimeoutMs, c.reconcileIntervalMs]).to.deep.equal([5000, 2000, 8000, 300000]);
    const set = loadConfig({ DB_STATEMENT_TIMEOUT_MS: "3000", DB_CONNECT_TIMEOUT_MS: "1500", RPC_TIMEOUT_MS: "4000", RECONCILE_INTERVAL_MS: "60000" });
    expect([set.dbStatementTimeoutMs, set.dbConnectTimeoutMs, set.rpcTimeoutMs, set.reconcileIntervalMs]).to.deep.equal([3000, 1500, 4000, 60000]);
    expect(() => loadConfig({ DB_CONNECT_TIMEOUT_MS: "0" })).to.throw(ConfigError, /DB_CONNECT_TIMEOUT_MS/);
  });

  it("reads retention (RETENTION_EVENTS_DAYS, RETENTION_WEBHOOK_DELIVERIES_DAYS, RETENTION_IDEMPOTENCY_HOURS, RETENTION_AUDIT_ENTRIES_DAYS)", () => {
    expect(loadConfig({}).retention).to.deep.equal({ eventsDays: 90, webhookDeliveriesDays: 30, idempotencyHours: 24, auditEntriesDays: 400 });
    const set = loadConfig({
      RETENTION_EVENTS_DAYS: "30",
      RETENTION_WEBHOOK_DELIVERIES_DAYS: "14",
      RETENTION_IDEMPOTENCY_HOURS: "48",
      RETENTION_AUDIT_ENTRIES_DAYS: "730",
    });
    expect(set.retention).to.deep.equal({ eventsDays: 30, webhookDeliveriesDays: 14, idempotencyHours: 48, auditEntriesDays: 730 });
    expect(Object.isFrozen(set.retention)).to.equal(true);
    expect(() => loadConfig({ RETENTION_EVENTS_DAYS: "6" })).to.throw(ConfigError, /RETENTION_EVENTS_DAYS must be an integer from 7/);
    expect(() => loadConfig({ RETENTION_IDEMPOTENCY_HOURS: "0" })).to.throw(ConfigError, /RETENTION_IDEMPOTENCY_HOURS/);
    expect(() => loadConfig({ RETENTION_WEBHOOK_DELIVERIES_DAYS: "1.5" })).to.throw(ConfigError, /RETENTION_WEBHOOK_DELIVERIES_DAYS/);
    // A delivery is sent from its event: the event must outlive it.
    expect(() => loadConfig({ RETENTION_EVENTS_DAYS: "30", RETENTION_WEBHOOK_DELIVERIES_DAYS: "31" })).to.throw(
      ConfigError,
      /RETENTION_WEBHOOK_DELIVERIES_DAYS must not exceed RETENTION_EVENTS_DAYS/,
    );
  });

  it("uses named prepared statements unless DB_PREPARED_STATEMENTS=false (a pooler in transaction mode)", () => {
    expect(loadConfig({}).dbPreparedStatements).to.equal(true);
    expect(loadConfig({ DB_PREPARED_STATEMENTS: "false" }).dbPreparedStatements).to.equal(false);
    expect(loadConfig({ DB_PREPARED_STATEMENTS: "0" }).dbPreparedStatements).to.equal(false);
    expect(() => loadConfig({ DB_PREPARED_STATEMENTS: "off" })).to.throw(ConfigError, /DB_PREPARED_STATEMENTS/);
  });

  it("lists every bad variable in one error", () => {
    let err: unknown;
    try {
      loadConfig({ PORT: "http", DATABASE_URL: "mysql://x", SANDBOX: "maybe", LOG_LEVEL: "loud" });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    const message = (err as Error).message;
    for (const name of ["PORT", "DATABASE_URL", "SANDBOX", "LOG_LEVEL"]) expect(message).to.contain(name);
    expect(message.split("\n")).to.have.length(1);
  });

  it("takes any non-empty ADMIN_API_KEY outside production, and at least 16 characters in production", () => {
    expect(loadConfig({ ADMIN_API_KEY: "admin" }).adminApiKey).to.equal("admin");
    const production = { NODE_ENV: "production", SANDBOX: "true", INTERNAL_API_TOKEN: "t".repeat(32), SECRETS_KEY: Buffer.alloc(32, 7).toString("base64") };
    expect(() => loadConfig({ ...production, ADMIN_API_KEY: "admin" })).to.throw(ConfigError, /ADMIN_API_KEY/);
    expect(loadConfig({ ...production, ADMIN_API_KEY: "a".repeat(16) }).adminApiKey).to.equal("a".repeat(16));
  });

  it("requires real secrets in production", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).to.throw(ConfigError, /INTERNAL_API_TOKEN.*SECRETS_KEY|SECRETS_KEY.*INTERNAL_API_TOKEN/);
    // Live production also names its own deposit keys (payment orders); any public keys will do here.
    const xpubs = { XPUB_BTC: TEST_DEPOSIT_XPUBS.BITCOIN, XPUB_ETH: TEST_DEPOSIT_XPUBS.ETHEREUM, XPUB_TRON: TEST_DEPOSIT_XPUBS.TRON };
    const c = loadConfig({ NODE_ENV: "production", INTERNAL_API_TOKEN: "t".repeat(32), SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"), ...xpubs });
    expect(c.sandbox).to.equal(false);
    expect(c.apiKeyMode).to.equal("live");
  });

  it("never prints a URL's credentials: a bad SMTP_URL is named, its password is not", () => {
    for (const SMTP_URL of ["smtp//mailer:s3cret-pa55@mail.example:587", "smtp://mailer:s3cret-pa55@mail example", "http://mailer:s3cret-pa55@mail.example"]) {
      let message = "";
      try {
        loadConfig({ SMTP_URL, EMAIL_FROM: "billing@example.com" });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, SMTP_URL).to.match(/SMTP_URL/);
      expect(message, SMTP_URL).to.not.include("s3cret-pa55");
    }
  });

  it("refuses SMTP_URL without EMAIL_FROM", () => {
    expect(() => loadConfig({ SMTP_URL: "smtp://mail.example:587" })).to.throw(ConfigError, /EMAIL_FROM/);
    expect(loadConfig({ SMTP_URL: "smtp://mail.example:587", EMAIL_FROM: "Billing <billing@example.com>" }).smtpUrl).to.equal("smtp://mail.example:587");
  });

  it("bounds PAYOUT_DESTINATION_COOLDOWN_MINUTES (0 to a year)", () => {
    expect(loadConfig({ PAYOUT_DESTINATION_COOLDOWN_MINUTES: "0" }).payoutDestinationCooldownMinutes).to.equal(0);
    expect(() => loadConfig({ PAYOUT_DESTINATION_COOLDOWN_MINUTES: "525601" })).to.throw(ConfigError, /PAYOUT_DESTINATION_COOLDOWN_MINUTES/);
    expect(() => loadConfig({ PAYOUT_DESTINATION_COOLDOWN_MINUTES: "-1" })).to.throw(ConfigError, /PAYOUT_DESTINATION_COOLDOWN_MINUTES/);
  });
});
