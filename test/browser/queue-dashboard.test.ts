import { expect } from "chai";
import { chromium, type Browser } from "playwright-core";
import { ADMIN_KEY, startTestSystem, useTestSystem } from "../support/system.ts";
import { CHROMIUM_ARGS } from "../support/browser.ts";

const QUEUES = ["scheduler", "renewals", "webhooks", "payments", "emails"];
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** bull-board at /admin/queues on the gateway, behind the operator key. */
describe("queue dashboard (/admin/queues)", function () {
  this.timeout(60_000);
  let browser: Browser;

  const sys = useTestSystem({ services: [], workerGroups: [] });
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
  });
  after(async () => {
    await browser?.close();
  });

  it("answers 401 with a Basic challenge without the key, or with a wrong one", async () => {
    for (const headers of [{}, { "x-admin-key": "wrong" }, { authorization: basic("ops", "wrong") }] as Record<string, string>[]) {
      const res = await sys.http.get("/admin/queues", headers);
      expect(res.status).to.equal(401);
      expect(res.headers.get("www-authenticate")).to.match(/^Basic /);
    }
    expect((await sys.http.get("/admin/queues/api/queues")).status).to.equal(401);
  });

  it("opens with X-ADMIN-KEY or with HTTP Basic (any user name, the key as password)", async () => {
    expect((await sys.http.get("/admin/queues", { "x-admin-key": ADMIN_KEY })).status).to.equal(200);
    expect((await sys.http.get("/admin/queues", { authorization: basic("anyone", ADMIN_KEY) })).status).to.equal(200);
  });

  it("is read-only by default", async () => {
    const res = await sys.http.get("/admin/queues/api/queues", { "x-admin-key": ADMIN_KEY });
    expect(res.status).to.equal(200);
    const queues = res.body.queues as { name: string; readOnlyMode: boolean }[];
    // Each group's jobs, and its sweeps on a queue of their own.
    expect(queues.map((q) => q.name).sort()).to.deep.equal([...QUEUES, ...QUEUES.map((q) => `${q}-sweeps`)].sort());
    expect(queues.every((q) => q.readOnlyMode)).to.equal(true);
  });

  it("Chromium: the page loads behind Basic auth and lists every queue", async () => {
    const context = await browser.newContext({ httpCredentials: { username: "operator", password: ADMIN_KEY } });
    try {
      const page = await context.newPage();
      const res = await page.goto(`${sys.baseUrl}/admin/queues`);
      expect(res?.status()).to.equal(200);
      for (const name of QUEUES) await page.getByText(name, { exact: true }).first().waitFor({ timeout: 15_000 });
    } finally {
      await context.close();
    }
  });

  it("loads nothing from outside the deployment (no Google Fonts), under a CSP that allows only itself", async () => {
    const res = await sys.http.get("/admin/queues", { "x-admin-key": ADMIN_KEY });
    expect(res.text)
      .to.contain("<html")
      .and.not.match(/fonts\.googleapis|fonts\.gstatic|https?:\/\//);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).to.contain("default-src 'self'").and.contain("script-src 'self'").and.contain("font-src 'self'");
    expect(csp).not.to.match(/script-src[^;]*unsafe-inline/);

    const context = await browser.newContext({ httpCredentials: { username: "operator", password: ADMIN_KEY } });
    try {
      const page = await context.newPage();
      const requested: string[] = [];
      const refused: string[] = [];
      page.on("request", (r) => void requested.push(r.url()));
      page.on("console", (m) => void (/Content.Security.Policy/i.test(m.text()) && refused.push(m.text())));
      await page.goto(`${sys.baseUrl}/admin/queues`);
      await page.getByText("webhooks", { exact: true }).first().waitFor({ timeout: 15_000 });
      await page.waitForLoadState("networkidle");
      expect(requested.length).to.be.greaterThan(3);
      expect(requested.filter((url) => !url.startsWith(`${sys.baseUrl}/`) && !url.startsWith("data:"))).to.deep.equal([]);
      expect(refused).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it("Chromium without credentials is challenged and gets nothing", async () => {
    const context = await browser.newContext();
    try {
      // Headless Chromium cannot prompt: the Basic challenge ends the navigation.
      const err = await (await context.newPage()).goto(`${sys.baseUrl}/admin/queues`).catch((e: Error) => e);
      expect(String(err)).to.match(/ERR_INVALID_AUTH_CREDENTIALS/);
    } finally {
      await context.close();
    }
  });
});

describe("queue dashboard settings", () => {
  it("404 when ADMIN_API_KEY is unset", async () => {
    const sys = await startTestSystem({ services: [], workerGroups: [], env: { ADMIN_API_KEY: "" } });
    try {
      expect((await sys.http.get("/admin/queues", { "x-admin-key": ADMIN_KEY })).status).to.equal(404);
      expect((await sys.http.get("/admin/queues/api/queues")).status).to.equal(404);
    } finally {
      await sys.close();
    }
  });

  it("QUEUE_DASHBOARD_WRITE=true turns read-only mode off", async () => {
    const sys = await startTestSystem({ services: [], workerGroups: [], env: { QUEUE_DASHBOARD_WRITE: "true" } });
    try {
      const res = await sys.http.get("/admin/queues/api/queues", { "x-admin-key": ADMIN_KEY });
      expect((res.body.queues as { readOnlyMode: boolean }[]).every((q) => !q.readOnlyMode)).to.equal(true);
    } finally {
      await sys.close();
    }
  });
});
