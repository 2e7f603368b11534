import { expect } from "chai";
import { execFile, spawn } from "node:child_process";
import http from "node:http";
import { promisify } from "node:util";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { apiClient } from "../support/http.ts";
import { eventually } from "../support/eventually.ts";
import { freePort } from "../support/redis-process.ts";

const run = promisify(execFile);
const BILLING = "cli/billing.ts";

describe("billing CLI", () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    db = await createTestDatabase();
    const { redisUrl } = await infrastructure();
    env = { ...process.env, DATABASE_URL: db.url, REDIS_URL: redisUrl, LOG_LEVEL: "silent", QUEUE_PREFIX: `cli${process.pid}`, METRICS_PORT: "0" };
  });
  after(async () => db?.drop());

  const billing = (...args: string[]) => run(process.execPath, [BILLING, ...args], { env });

  it("creates a merchant and manages its API keys, printing JSON with --json", async () => {
    const created = JSON.parse((await billing("merchants", "create", "--name", "CLI Co", "--json")).stdout);
    expect(created).to.include.keys("id", "name", "apiKey", "apiKeyId");
    expect(created.apiKey).to.match(/^sk_test_/);
    const key = JSON.parse((await billing("api-keys", "create", "--merchant", created.id, "--json")).stdout);
    expect(key.apiKey).to.match(/^sk_test_/);
    const revoked = JSON.parse((await billing("api-keys", "revoke", "--merchant", created.id, "--key", key.id, "--json")).stdout);
    expect(revoked).to.deep.equal({ id: key.id, revoked: true });
  });

  it("takes the ids as --merchant-id/--key-id or positionally as well", async () => {
    const created = JSON.parse((await billing("merchants", "create", "Positional Co", "--json")).stdout);
    expect(created.name).to.equal("Positional Co");
    const key = JSON.parse((await billing("api-keys", "create", "--merchant-id", created.id, "--json")).stdout);
    expect(JSON.parse((await billing("api-keys", "revoke", created.id, "--key-id", key.id, "--json")).stdout)).to.deep.equal({ id: key.id, revoked: true });
    const missing: any = await billing("api-keys", "create", "--json").catch((e) => e);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain("--merchant");
  });

  it("a command named like an Object.prototype member is an unknown command, not a crash", async () => {
    for (const name of ["constructor", "__proto__", "toString", "valueOf"]) {
      const err: any = await billing(name).catch((e) => e);
      expect(err.code, name).to.equal(2);
      expect(err.stderr, name).to.contain(`unknown command: ${name}`);
    }
  });

  it("migrate reports nothing pending on a migrated database", async () => {
    const out = JSON.parse((await billing("migrate", "--json")).stdout);
    expect(out.applied).to.deep.equal([]);
  });

  it("stops with one clear line on a bad configuration", async () => {
    const err: any = await run(process.execPath, [BILLING, "migrate"], { env: { ...env, PORT: "not-a-port" } }).catch((e) => e);
    expect(err.code).to.equal(1);
    expect(err.stderr.trim().split("\n")).to.have.length(1);
    expect(err.stderr).to.contain("PORT");
    expect(err.stderr).not.to.contain("    at ");
  });

  it("runs the gateway as its own role and shuts down gracefully on SIGTERM", async function () {
    this.timeout(30_000);
    // services + gateway as two roles in two processes, talking gRPC over loopback.
    const servicesPort = String(20000 + (process.pid % 20000));
    const gatewayPort = String(Number(servicesPort) + 1);
    const roleEnv = { ...env, SERVICES_PORT: servicesPort, PORT: gatewayPort, ADMIN_API_KEY: "cli-admin-key-0123456789" };
    const services = spawn(process.execPath, [BILLING, "start", "services"], { env: roleEnv, stdio: "ignore" });
    const gateway = spawn(process.execPath, [BILLING, "start", "gateway"], { env: roleEnv, stdio: "ignore" });
    try {
      const admin = apiClient(`http://127.0.0.1:${gatewayPort}`, { "x-admin-key": "cli-admin-key-0123456789" });
      const res = await eventually(
        async () => {
          const answer = await admin.post("/admin/v1/merchants", { name: "Split" }).catch(() => undefined);
          return answer?.status === 201 && answer;
        },
        15_000,
        "the two roles to create a merchant",
        200,
      );
      expect(res.status).to.equal(201);
    } finally {
      const exited = (p: typeof services) => new Promise<number | null>((resolve) => p.once("exit", (code) => resolve(code)));
      const [g, s] = [exited(gateway), exited(services)];
      gateway.kill("SIGTERM");
      services.kill("SIGTERM");
      expect(await g).to.equal(0);
      expect(await s).to.equal(0);
    }
  });

  it("a gateway told to stop while keep-alive clients keep sending answers them, closes their connections and exits 0", async function () {
    // A client behind a keep-alive pool never leaves an open connection idle: server.close() alone waited for it
    // until the 30 s shutdown bound, and the process exited 1 with requests in flight.
    this.timeout(60_000);
    const port = await freePort();
    const gateway = spawn(process.execPath, [BILLING, "start", "gateway"], {
      env: { ...env, PORT: String(port), SERVICES_PORT: String(await freePort()) },
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => gateway.once("exit", (code) => resolve(code)));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    // Each request's body follows its headers 200 ms later, so a connection is busy nearly all the time; the signal
    // is sent right after a request's headers went out, so at least that one is in flight when the gateway closes.
    const body = JSON.stringify({ planId: "p" });
    let stopNow = false;
    let signalled = false;
    const post = () =>
      new Promise<string>((resolve) => {
        const req = http.request(
          {
            port,
            host: "127.0.0.1",
            method: "POST",
            path: "/api/v1/subscriptions",
            agent,
            headers: { "content-type": "application/json", "content-length": body.length },
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve(`${res.statusCode} ${res.headers.connection}`));
          },
        );
        req.on("error", (err: NodeJS.ErrnoException) => setTimeout(() => resolve(err.code ?? "error"), 20));
        req.flushHeaders();
        if (stopNow && !signalled) {
          signalled = true; // one SIGTERM, as an orchestrator sends (a second one ends the process at once)
          setTimeout(() => gateway.kill("SIGTERM"), 20);
        }
        setTimeout(() => req.end(body), 200);
      });
    let running = true;
    const answers: string[] = [];
    const clients = Array.from({ length: 4 }, async () => {
      while (running) answers.push(await post());
    });
    try {
      await eventually(async () => (answers.includes("401 keep-alive") ? true : undefined), 20_000, "the gateway to answer", 100);
      stopNow = true;
      expect(await exited).to.equal(0);
      // The requests in flight at the signal were answered, the last on each connection with `Connection: close`.
      expect(answers.filter((a) => /^\d{3} close$/.test(a))).to.not.be.empty;
    } finally {
      running = false;
      await Promise.all(clients);
      agent.destroy();
      if (gateway.exitCode === null) gateway.kill("SIGKILL");
    }
  });
});
