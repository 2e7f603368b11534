import { expect } from "chai";
import { execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { NODE_ARGS, repoPath } from "../bench/split-roles.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { apiClient } from "../support/http.ts";
import { infrastructure } from "../support/infrastructure.ts";
import { freePort } from "../support/redis-process.ts";

const run = promisify(execFile);
const ADMIN_KEY = "build-admin-key-0123456789";

/**
 * `npm start` runs what `npm run build` made (package.json's start scripts,
 * the image's ENTRYPOINT): the compiled roles must work as the sources do,
 * with every file the code reads beside its module and no .ts file left to load.
 */
describe("npm run build: the compiled roles", () => {
  let db: TestDatabase;

  before(async function () {
    this.timeout(60_000);
    await run(process.execPath, [repoPath("cli/build.ts")]);
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  it("copies every file of the source folders that is not TypeScript beside its module", () => {
    for (const folder of ["cli", "services", "gateway", "workers"]) {
      for (const entry of readdirSync(repoPath(folder), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || entry.name.endsWith(".ts")) continue;
        const relative = path.relative(repoPath("."), path.join(entry.parentPath, entry.name));
        expect(existsSync(repoPath(path.join("dist", relative))), relative).to.equal(true);
      }
    }
  });

  it("npm start's command serves the API, the pages and its probes without loading any .ts file, and stops cleanly", async function () {
    this.timeout(60_000);
    const { redisUrl } = await infrastructure();
    const [port, opsPort] = [await freePort(), await freePort()];
    // Type stripping off: a .ts module anywhere in the process would fail to load and the role would not start.
    const child = spawn(process.execPath, ["--no-experimental-strip-types", ...NODE_ARGS, "all"], {
      cwd: repoPath("."),
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: db.url,
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `build${process.pid}`,
        ADMIN_API_KEY: ADMIN_KEY,
        SANDBOX: "true",
        PORT: String(port),
        SERVICES_PORT: "0",
        METRICS_PORT: String(opsPort),
        LOG_LEVEL: "warn",
      },
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      expect(
        NODE_ARGS.some((a) => a.startsWith("dist/")),
        NODE_ARGS.join(" "),
      ).to.equal(true);
      await eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${stderr}`);
          return (await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined))?.status === 200;
        },
        30_000,
        () => `the compiled process to be ready (${stderr})`,
        100,
      );
      const base = `http://127.0.0.1:${port}`;
      const created = await apiClient(base, { "x-admin-key": ADMIN_KEY }).post("/admin/v1/merchants", { name: "Compiled" });
      expect(created.status, created.text).to.equal(201);
      const page = await fetch(`${base}/dashboard/login`);
      expect(page.status).to.equal(200);
      expect(await page.text()).to.contain("<form");
      const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
      expect(metrics).to.contain("billing_heap_live_bytes");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited, stderr).to.equal(0);
  });
});
