import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { acceptInviteAndEnrol, invite, nextCode, submit, type MemberFixture } from "../support/dashboard.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { approvedSubscription, chargesOf } from "../support/billing.ts";
import { paidOrder } from "../support/order-refunds.ts";
import { HOSTILE } from "../support/hostile-text.ts";
import { ALL_JOBS } from "../../workers/registry.ts";
import { payoutJobs } from "../../services/payouts/jobs.ts";

const TRON_ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
const TRON_ADDRESS_2 = "TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL";
const PAGES = ["api-keys", "webhooks", "events", "refunds", "balance", "payouts"] as const;
const NAV_NAMES = ["API keys", "Webhooks", "Events", "Refunds", "Balance", "Payouts"];

/**
 * The dashboard's object pages (issue 24, part 2) in headless Chromium with
 * JavaScript off, on the real stack: API keys (create with a fresh code, shown
 * once, works then stops working once revoked; last use), Webhooks (endpoint
 * with its secret shown once, rotate, disable/enable, the delivery log with
 * every attempt, redeliver), Events (type filter, keyset paging, escaped
 * JSON), Refunds, Balance (history filters), Payouts (destinations added,
 * activated at once by an owner with a fresh code, payouts created and
 * cancelled); the role matrix, wrong and reused codes, another merchant's ids
 * as the 404 page, CSRF, and every page at 1280 and 390 px with axe.
 */
describe("dashboard: API keys, webhooks, events, refunds, balance, payouts (headless Chromium)", function () {
  this.timeout(180_000);
  let browser: Browser;
  let receiver: WebhookReceiver;
  let acme: { id: string; api: ApiClient };
  let globex: { id: string; api: ApiClient; apiKeyId: string };
  /** An endpoint of acme's that no event goes to (for the pages that need one). */
  let quietEndpointId: string;
  const contexts: BrowserContext[] = [];

  /** A member of `merchantId` with `role`, enrolled and logged in, on its own browser context. */
  async function member(
    merchantId: string,
    role: string,
    viewport = { width: 1280, height: 800 },
    isMobile = false,
  ): Promise<{ page: Page; member: MemberFixture }> {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
    contexts.push(context);
    const page = await context.newPage();
    return { page, member: await acceptInviteAndEnrol(page, sys, await invite(sys, merchantId, role)) };
  }

  const url = (path: string) => `${sys.baseUrl}${path}`;
  const csrfOf = async (page: Page) => (await page.getAttribute("input[name=csrf]", "value"))!;
  const postForm = async (page: Page, path: string, form: Record<string, string>) =>
    page.request.post(url(path), { form: { csrf: await csrfOf(page), ...form } });

  // Payouts stay PENDING (no payouts jobs hand them to the chain), so the page can cancel one.
  const sys = useTestSystem({
    env: { WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.2", WEBHOOK_TIMEOUT_MS: "800", PAYOUT_DESTINATION_COOLDOWN_MINUTES: "60" },
    jobs: ALL_JOBS.filter((h) => !payoutJobs.includes(h as never)),
  });
  before(async () => {
    [browser, receiver] = await Promise.all([
      chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true }),
      startWebhookReceiver(),
    ]);
    acme = await sys.createMerchant("Acme Streaming");
    globex = await sys.createMerchant("Globex News");
    const quiet = await acme.api.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/quiet`, enabledEvents: ["plan.archived"], description: "Quiet" });
    expect(quiet.status, quiet.text).to.equal(201);
    quietEndpointId = quiet.body.id;
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await receiver?.close();
  });

  it("every page is in the navigation with its accessible name and answers 200 to every role", async () => {
    const { page } = await member(acme.id, "VIEWER");
    for (const name of NAV_NAMES)
      expect(await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name, exact: true }).count(), name).to.equal(1);
    for (const p of PAGES) {
      const res = await page.goto(url(`/dashboard/${p}`));
      expect(res!.status(), p).to.equal(200);
      expect(await page.locator("h1").first().textContent(), p).to.be.a("string");
    }
  });

  describe("API keys", () => {
    it("a DEVELOPER creates a key with a fresh code (shown once; it works on /api/v1, its last use shows), then revokes it (401 from then on)", async () => {
      const { page, member: dev } = await member(acme.id, "DEVELOPER");
      await page.goto(url("/dashboard/api-keys"));
      // Without a code, and with a wrong one: refused, no key made.
      const keysBefore = (await sys.sql(`select count(*)::int as n from api_keys where merchant_id = ?`, [acme.id]))[0].n;
      expect((await submit(page, "button[name=action][value=create-api-key]")).status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("code");
      await page.fill("input[name=totp]", "000000");
      expect((await submit(page, "button[name=action][value=create-api-key]")).status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("not right");
      const code = await nextCode(dev);
      await page.fill("input[name=totp]", code);
      expect((await submit(page, "button[name=action][value=create-api-key]")).status()).to.equal(201);
      const key = (await page.textContent("[data-api-key]"))!.trim();
      const keyId = (await page.getAttribute("[data-api-key]", "data-key-id"))!;
      expect(key).to.match(/^sk_(test|live)_/);
      expect((await sys.sql(`select count(*)::int as n from api_keys where merchant_id = ?`, [acme.id]))[0].n).to.equal(keysBefore + 1);
      // The code is spent: the same code again is refused.
      await page.fill("input[name=totp]", code);
      expect((await submit(page, "button[name=action][value=create-api-key]")).status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("already used");

      // Shown once: a reload lists it by prefix only.
      await page.goto(url("/dashboard/api-keys"));
      expect(await page.content()).not.to.include(key);
      const row = page.locator(`tr[data-key-id="${keyId}"]`);
      expect(await row.locator("td").first().textContent()).to.include(key.slice(0, 12));
      expect(await row.textContent()).to.include("Never");

      const headers = { "x-api-key": key };
      expect((await sys.http.get("/api/v1/subscription-plans", headers)).status).to.equal(200);
      await page.reload();
      expect(await page.locator(`tr[data-key-id="${keyId}"] td[data-label="Last used"]`).textContent()).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);

      expect((await submit(page, `form[data-key-id="${keyId}"] button[name=action][value=revoke-api-key]`)).status()).to.equal(303);
      expect(await page.textContent("[role=status]")).to.include("revoked");
      expect(await page.locator(`tr[data-key-id="${keyId}"] td[data-label="Status"]`).textContent()).to.include("Revoked");
      expect(await page.locator(`form[data-key-id="${keyId}"]`).count()).to.equal(0);
      await eventually(
        async () => ((await sys.http.get("/api/v1/subscription-plans", headers)).status === 401 ? true : undefined),
        5_000,
        "the revoked key refused",
      );
    });

    it("SUPPORT sees no create or revoke button and a posted create is 403 with [role=alert]; another merchant's key id is the 404 page", async () => {
      const { page } = await member(acme.id, "SUPPORT");
      await page.goto(url("/dashboard/api-keys"));
      expect(await page.locator("tr[data-key-id]").count()).to.be.greaterThan(0);
      expect(await page.locator("button[name=action]:not([value=logout])").count()).to.equal(0);
      const refused = await postForm(page, "/dashboard/api-keys", { action: "create-api-key", totp: "123456" });
      expect(refused.status()).to.equal(403);
      expect(await refused.text()).to.include('role="alert"');

      const { page: admin } = await member(acme.id, "ADMIN");
      await admin.goto(url("/dashboard/api-keys"));
      const foreign = await postForm(admin, "/dashboard/api-keys", { action: "revoke-api-key", keyId: globex.apiKeyId });
      expect(foreign.status()).to.equal(404);
      expect((await sys.sql(`select revoked_at from api_keys where id = ?`, [globex.apiKeyId]))[0].revoked_at).to.equal(null);
      expect((await postForm(admin, "/dashboard/api-keys", { action: "revoke-api-key", keyId: "not-a-uuid" })).status()).to.equal(404);
    });
  });

  describe("webhooks and events", () => {
    it("a DEVELOPER adds an endpoint (secret shown once), sees a delivery with every attempt, redelivers it, rotates the secret, disables and enables", async () => {
      const { page } = await member(acme.id, "DEVELOPER");
      await page.goto(url("/dashboard/webhooks"));
      // A bad URL: the service's refusal as a 400 page naming the field, the form kept.
      await page.fill("input[name=url]", "ftp://hooks.example.com/x");
      expect((await submit(page, "button[name=action][value=create-webhook-endpoint]")).status()).to.equal(400);
      expect(await page.textContent("[role=alert]")).to.include("http or https");
      expect(await page.inputValue("input[name=url]")).to.equal("ftp://hooks.example.com/x");

      // The receiver fails the first request with a long body, then answers 200.
      receiver.respond = (_r, i) => (i === 0 ? { status: 500, body: `<b>boom</b> ${"x".repeat(3000)}` } : { status: 200, body: "ok" });
      await page.fill("input[name=url]", receiver.url);
      await page.fill("input[name=description]", "Orders <service>");
      await page.fill("input[name=enabledEvents]", "plan.created, plan.updated");
      expect((await submit(page, "button[name=action][value=create-webhook-endpoint]")).status()).to.equal(201);
      const secret = (await page.textContent("[data-webhook-secret]"))!.trim();
      expect(secret).to.match(/^whsec_/);
      const endpointId = (await page.getAttribute("dl[data-endpoint-id]", "data-endpoint-id"))!;
      const path = `/dashboard/webhooks/${endpointId}`;

      const plan = await acme.api.post("/api/v1/subscription-plans", { name: "Hooked", amount: "5", currency: "USD", interval: "MONTH" });
      expect(plan.status, plan.text).to.equal(201);
      await receiver.waitFor((r) => r.length >= 2, 20_000);
      await eventually(
        async () => {
          await page.goto(url(path));
          return (await page.locator("tr[data-delivery-id] [data-status=SUCCEEDED]").count()) === 1 ? true : undefined;
        },
        15_000,
        "the delivery shown as delivered",
      );
      expect(await page.content()).not.to.include(secret);
      const delivery = page.locator("tr[data-delivery-id]").first();
      const attempts = delivery.locator("li[data-attempt]");
      expect(await attempts.count()).to.equal(2);
      expect(await attempts.nth(0).locator("[data-attempt-status]").textContent()).to.equal("500");
      expect(await attempts.nth(1).locator("[data-attempt-status]").textContent()).to.equal("200");
      expect(await attempts.nth(0).locator("[data-attempt-time]").textContent()).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
      expect(await attempts.nth(0).locator("[data-attempt-duration]").textContent()).to.match(/^\d+ ms$/);
      // The response excerpt is text: escaped, not markup.
      expect(await attempts.nth(0).locator("[data-attempt-response]").textContent()).to.include("<b>boom</b>");
      expect(await attempts.nth(0).locator("[data-attempt-response] b").count()).to.equal(0);

      // Redeliver: a third request with the same webhook-id.
      const eventId = (await delivery.getAttribute("data-event-id"))!;
      expect((await submit(page, `tr[data-event-id="${eventId}"] button[name=action][value=redeliver-event]`)).status()).to.equal(303);
      expect(await page.textContent("[role=status]")).to.include("queued again");
      const all = await receiver.waitFor((r) => r.length >= 3, 20_000);
      expect(all[2]!.headers["webhook-id"]).to.equal(all[1]!.headers["webhook-id"]);

      expect((await submit(page, "button[name=action][value=rotate-webhook-secret]")).status()).to.equal(200);
      const rotated = (await page.textContent("[data-webhook-secret]"))!.trim();
      expect(rotated)
        .to.match(/^whsec_/)
        .and.not.equal(secret);

      expect((await submit(page, "button[name=action][value=disable-webhook-endpoint]")).status()).to.equal(303);
      expect(await page.getAttribute("dd[data-status]", "data-status")).to.equal("DISABLED");
      // Redelivering to a disabled endpoint: a 409 page saying what to do, never a 500.
      const disabled = await postForm(page, path, { action: "redeliver-event", eventId });
      expect(disabled.status()).to.equal(409);
      expect(await disabled.text()).to.include("enable it first");
      expect((await submit(page, "button[name=action][value=enable-webhook-endpoint]")).status()).to.equal(303);
      expect(await page.getAttribute("dd[data-status]", "data-status")).to.equal("ENABLED");

      // The list shows it, its description escaped.
      await page.goto(url("/dashboard/webhooks"));
      expect(await page.textContent(`tr[data-endpoint-id="${endpointId}"]`)).to.include("Orders <service>");
      // A filter the service refuses: 400 with the reason.
      const bad = await page.goto(url(`${path}?status=NOPE`));
      expect(bad!.status()).to.equal(400);
      expect(await page.textContent("[role=alert]")).to.match(/^\s*Status: must be one of/);
    });

    it("Events: a type filter, keyset paging, each event's JSON escaped in a <pre>; a VIEWER may not redeliver", async () => {
      const { page } = await member(acme.id, "DEVELOPER");
      for (let i = 0; i < 21; i++) {
        expect(
          (await acme.api.post("/api/v1/subscription-plans", { name: `${HOSTILE} ${i}`, amount: "5", currency: "USD", interval: "MONTH" })).status,
        ).to.equal(201);
      }
      await page.goto(url("/dashboard/events?type=plan.created"));
      const rows = page.locator("tr[data-event-id]");
      expect(await rows.count()).to.equal(20);
      for (const t of await page.locator('tr[data-event-id] td[data-label="Type"]').allTextContents()) expect(t).to.equal("plan.created");
      const json = await rows.first().locator("pre[data-event-json]").textContent();
      expect(JSON.parse(json!)).to.include({ type: "plan.created" });
      expect(json).to.include(JSON.stringify(HOSTILE).slice(1, -1));
      expect(await page.locator("pre[data-event-json] script, pre[data-event-json] img").count()).to.equal(0);
      const firstIds = await rows.evaluateAll((els) => els.map((e) => (e as any).getAttribute("data-event-id")));
      await Promise.all([page.waitForURL(/cursor=/), page.click("a[rel=next]")]);
      expect(new URL(page.url()).searchParams.get("type")).to.equal("plan.created");
      const nextIds = await page.locator("tr[data-event-id]").evaluateAll((els) => els.map((e) => (e as any).getAttribute("data-event-id")));
      expect(nextIds.length).to.be.greaterThan(0);
      expect(nextIds.filter((id) => firstIds.includes(id))).to.deep.equal([]);
      expect((await page.goto(url("/dashboard/events?cursor=forged")))!.status()).to.equal(400);
      expect(await page.textContent("[role=alert]")).to.include("cursor");

      const { page: viewer } = await member(acme.id, "VIEWER");
      await viewer.goto(url("/dashboard/events"));
      expect(await viewer.locator("button[name=action][value=redeliver-event]").count()).to.equal(0);
      const refused = await postForm(viewer, "/dashboard/events", { action: "redeliver-event", eventId: firstIds[0]! });
      expect(refused.status()).to.equal(403);
      expect(await refused.text()).to.include('role="alert"');
    });

    it("another merchant's endpoint or event is the 404 page, to read and to act on", async () => {
      const foreign = await globex.api.post("/api/v1/webhook-endpoints", { url: "https://hooks.example.com/x" });
      expect(foreign.status, foreign.text).to.equal(201);
      expect((await globex.api.post("/api/v1/subscription-plans", { name: "Globex plan", amount: "5", currency: "USD", interval: "MONTH" })).status).to.equal(
        201,
      );
      const foreignEvent = (await globex.api.get("/api/v1/events?limit=1")).body.data[0];
      const { page } = await member(acme.id, "OWNER");
      expect((await page.goto(url(`/dashboard/webhooks/${foreign.body.id}`)))!.status()).to.equal(404);
      expect((await page.goto(url("/dashboard/webhooks/not-a-uuid")))!.status()).to.equal(404);
      await page.goto(url("/dashboard/webhooks"));
      expect((await postForm(page, `/dashboard/webhooks/${foreign.body.id}`, { action: "disable-webhook-endpoint" })).status()).to.equal(404);
      expect((await postForm(page, `/dashboard/webhooks/${foreign.body.id}`, { action: "rotate-webhook-secret" })).status()).to.equal(404);
      expect((await globex.api.get(`/api/v1/webhook-endpoints/${foreign.body.id}`)).body.status).to.equal("ENABLED");
      expect((await postForm(page, "/dashboard/events", { action: "redeliver-event", eventId: foreignEvent.id })).status()).to.equal(404);
    });
  });

  describe("refunds, balance and payouts", () => {
    let chargeId: string;
    let subscriptionId: string;

    before(async () => {
      const rpc = subscriptionsRpc(sys);
      try {
        const s = await approvedSubscription(sys, acme.api, rpc.client, { plan: { amount: "10" }, credits: { USDT_TRON: "100" } });
        subscriptionId = s.subscriptionId;
        chargeId = (await eventually(async () => (await chargesOf(sys, subscriptionId)).find((c) => c.status === "SUCCEEDED"), 15_000, "the first charge"))!.id;
      } finally {
        rpc.close();
      }
      const refund = await acme.api.post("/api/v1/refunds", { chargeId, amount: "2.50", reason: "goodwill <b>" });
      expect(refund.status, refund.text).to.equal(201);
      await paidOrder(sys, acme.api, "100");
    });

    it("Refunds: the list with the API's filters; a SUPPORT member reads it", async () => {
      const { page } = await member(acme.id, "SUPPORT");
      await page.goto(url("/dashboard/refunds"));
      const row = page.locator("tr[data-refund-id]").first();
      expect(await row.locator('td[data-label="Amount"]').textContent()).to.equal("2.50 USD");
      expect(await row.locator('td[data-label="Reason"]').textContent()).to.equal("goodwill <b>");
      await page.goto(url(`/dashboard/refunds?chargeId=${chargeId}`));
      expect(await page.locator("tr[data-refund-id]").count()).to.equal(1);
      await page.goto(url(`/dashboard/refunds?subscriptionId=00000000-0000-4000-8000-000000000000`));
      expect(await page.locator("tr[data-refund-id]").count()).to.equal(0);
    });

    it("Balance: available and pending per asset, the history with its filters", async () => {
      const { page } = await member(acme.id, "VIEWER");
      await page.goto(url("/dashboard/balance"));
      const available = await page.textContent('tr[data-asset="USDT_TRON"] [data-balance-available]');
      const api = (await acme.api.get("/api/v1/balance")).body.available.find((b: any) => b.asset === "USDT_TRON").amount;
      expect(available).to.match(/ USDT_TRON$/);
      expect(Number(available!.replace(" USDT_TRON", "").replaceAll(",", ""))).to.equal(Number(api));
      await page.selectOption("select[name=type]", "REFUND");
      await Promise.all([page.waitForURL(/type=REFUND/), page.click("form.filters button")]);
      const types = await page.locator("tr[data-balance-transaction-id]").evaluateAll((els) => els.map((e) => (e as any).getAttribute("data-type")));
      expect(types).to.have.length(1);
      expect(types[0]).to.equal("REFUND");
      expect((await page.goto(url("/dashboard/balance?createdAfter=yesterday")))!.status()).to.equal(400);
      expect(await page.textContent("[role=alert]")).to.include("YYYY-MM-DD");
      expect((await page.goto(url("/dashboard/balance?asset=DOGE")))!.status()).to.equal(400);
      expect(await page.textContent("[role=alert]")).to.match(/^\s*Asset: must be one of/);
      await page.goto(url("/dashboard/balance?createdAfter=2999-01-01"));
      expect(await page.locator("tr[data-balance-transaction-id]").count()).to.equal(0);
    });

    it("Payouts: an OWNER adds a destination and activates it at once with a fresh code, activates another, pays out and cancels; wrong codes and other roles are refused", async () => {
      const { page, member: owner } = await member(acme.id, "OWNER");
      await page.goto(url("/dashboard/payouts"));
      // A wrong code: nothing added.
      await page.selectOption("select[name=asset]", "USDT_TRON");
      await page.fill("input[name=address]", TRON_ADDRESS);
      await page.fill("#destination-totp", "000000");
      expect((await submit(page, "button[name=action][value=add-payout-destination]")).status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include("not right");
      expect(await page.inputValue("input[name=address]")).to.equal(TRON_ADDRESS);
      expect((await sys.sql(`select count(*)::int as n from payout_destinations where merchant_id = ?`, [acme.id]))[0].n).to.equal(0);

      await page.check("input[name=activateNow]");
      await page.fill("#destination-totp", await nextCode(owner));
      expect((await submit(page, "button[name=action][value=add-payout-destination]")).status()).to.equal(303);
      expect(await page.textContent("[role=status]")).to.include("active");
      const active = page.locator("tr[data-destination-id] [data-status=ACTIVE]");
      expect(await active.count()).to.equal(1);
      const [activated] = await sys.sql(`select type from events where merchant_id = ? and type like 'payout_destination.%' order by created_at`, [acme.id]);
      expect(activated.type).to.equal("payout_destination.created");
      expect((await sys.sql(`select count(*)::int as n from events where merchant_id = ? and type = 'payout_destination.activated'`, [acme.id]))[0].n).to.equal(
        1,
      );

      // A second one, left to cool, by another owner; activated afterwards by a third (a member's codes are one per 30-second step).
      const second = await member(acme.id, "OWNER");
      await second.page.goto(url("/dashboard/payouts"));
      await second.page.selectOption("select[name=asset]", "USDT_TRON");
      await second.page.fill("input[name=address]", TRON_ADDRESS_2);
      await second.page.fill("#destination-totp", await nextCode(second.member));
      expect((await submit(second.page, "button[name=action][value=add-payout-destination]")).status()).to.equal(303);
      expect(await second.page.textContent("[role=status]")).to.include("cooling period");
      const pendingId = (await second.page.locator("tr[data-destination-id]:has([data-status=PENDING_ACTIVATION])").getAttribute("data-destination-id"))!;
      const third = await member(acme.id, "OWNER");
      await third.page.goto(url("/dashboard/payouts"));
      await third.page.fill(`#activate-totp-${pendingId}`, await nextCode(third.member));
      expect((await submit(third.page, `form[data-destination-id="${pendingId}"] button[name=action][value=activate-payout-destination]`)).status()).to.equal(
        303,
      );
      expect(await third.page.getAttribute(`tr[data-destination-id="${pendingId}"] td[data-status]`, "data-status")).to.equal("ACTIVE");
      await page.goto(url("/dashboard/payouts"));

      // A payout: a fresh code; a reused one refused.
      await page.selectOption("select[name=destinationId]", pendingId);
      await page.fill("input[name=amount]", "20");
      const code = await nextCode(owner);
      await page.fill("#payout-totp", code);
      expect((await submit(page, "button[name=action][value=create-payout]")).status()).to.equal(303);
      expect(await page.textContent("[role=status]")).to.include("payout is created");
      const payoutRow = page.locator("tr[data-payout-id]").first();
      expect(await payoutRow.locator("[data-status]").getAttribute("data-status")).to.equal("PENDING");
      await page.fill("input[name=amount]", "20");
      await page.fill("#payout-totp", code);
      expect((await submit(page, "button[name=action][value=create-payout]")).status()).to.equal(401);
      // Too much: the service's refusal in words, never a 500.
      await second.page.goto(url("/dashboard/payouts"));
      await second.page.fill("input[name=amount]", "100000");
      await second.page.fill("#payout-totp", await nextCode(second.member));
      const tooMuch = await submit(second.page, "button[name=action][value=create-payout]");
      expect(tooMuch.status()).to.equal(409);
      expect(await second.page.textContent("[role=alert]")).to.include("balance in this asset is too low");

      // Cancel the PENDING payout: its amount + fee return; its button is gone.
      await page.goto(url("/dashboard/payouts"));
      const payoutId = (await page.locator("tr[data-payout-id]").first().getAttribute("data-payout-id"))!;
      expect(await page.getAttribute(`tr[data-payout-id="${payoutId}"] td[data-status]`, "data-status")).to.equal("PENDING");
      const beforeCancel = (await acme.api.get("/api/v1/balance")).body.available.find((b: any) => b.asset === "USDT_TRON").amount;
      expect((await submit(page, `form[data-payout-id="${payoutId}"] button[name=action][value=cancel-payout]`)).status()).to.equal(303);
      expect(await page.textContent("[role=status]")).to.include("cancelled");
      expect(await page.getAttribute(`tr[data-payout-id="${payoutId}"] td[data-status]`, "data-status")).to.equal("CANCELLED");
      expect(await page.locator(`form[data-payout-id="${payoutId}"]`).count()).to.equal(0);
      const afterCancel = (await acme.api.get("/api/v1/balance")).body.available.find((b: any) => b.asset === "USDT_TRON").amount;
      expect(Number(afterCancel) - Number(beforeCancel)).to.equal(21);
      // Cancelling it again (a stale page): 409 in words, never a 500.
      const again = await postForm(page, "/dashboard/payouts", { action: "cancel-payout", payoutId });
      expect(again.status()).to.equal(409);
      expect(await again.text()).to.include("can no longer be cancelled");
      const dest = pendingId;

      // Another merchant's payout or destination: the 404 page.
      const globexDest = await globex.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS });
      expect(
        (await postForm(page, "/dashboard/payouts", { action: "activate-payout-destination", destinationId: globexDest.body.id, totp: "000000" })).status(),
      ).to.equal(404);
      expect((await globex.api.get(`/api/v1/payout-destinations/${globexDest.body.id}`)).body.status).to.equal("PENDING_ACTIVATION");
      expect((await postForm(page, "/dashboard/payouts", { action: "cancel-payout", payoutId: "00000000-0000-4000-8000-000000000000" })).status()).to.equal(
        404,
      );

      // A DEVELOPER reads payouts but has no buttons, and a posted payout is 403.
      const { page: dev } = await member(acme.id, "DEVELOPER");
      await dev.goto(url("/dashboard/payouts"));
      expect(await dev.locator("tr[data-payout-id]").count()).to.be.greaterThan(0);
      expect(await dev.locator("button[name=action]:not([value=logout])").count()).to.equal(0);
      const refused = await postForm(dev, "/dashboard/payouts", { action: "create-payout", destinationId: dest, amount: "1", totp: "123456" });
      expect(refused.status()).to.equal(403);
      expect(await refused.text()).to.include('role="alert"');
    });
  });

  it("a VIEWER sees no action button on any page, and every posted action answers 403 with [role=alert]; a form without CSRF is 403", async () => {
    const { page } = await member(acme.id, "VIEWER");
    const endpoint = { id: quietEndpointId };
    const posts: [string, Record<string, string>][] = [
      ["/dashboard/api-keys", { action: "create-api-key", totp: "123456" }],
      ["/dashboard/api-keys", { action: "revoke-api-key", keyId: globex.apiKeyId }],
      ["/dashboard/webhooks", { action: "create-webhook-endpoint", url: "https://x.example.com" }],
      [`/dashboard/webhooks/${endpoint.id}`, { action: "rotate-webhook-secret" }],
      [`/dashboard/webhooks/${endpoint.id}`, { action: "redeliver-event", eventId: "x" }],
      ["/dashboard/events", { action: "redeliver-event", eventId: "x" }],
      ["/dashboard/payouts", { action: "add-payout-destination", asset: "USDT_TRON", address: TRON_ADDRESS, totp: "123456" }],
      ["/dashboard/payouts", { action: "cancel-payout", payoutId: "x" }],
    ];
    for (const p of [...PAGES, `webhooks/${endpoint.id}`]) {
      await page.goto(url(`/dashboard/${p}`));
      expect(await page.locator("button[name=action]:not([value=logout])").count(), p).to.equal(0);
    }
    for (const [path, form] of posts) {
      const res = await postForm(page, path, form);
      expect(res.status(), `${path} ${form.action}`).to.equal(403);
      expect(await res.text()).to.include('role="alert"');
    }
    for (const [path, form] of posts) {
      const res = await page.request.post(url(path), { form });
      expect(res.status(), `${path} without CSRF`).to.equal(403);
      expect(await res.text()).to.include("reload");
    }
  });

  // Last (mocha runs a block's own tests before its nested blocks): the pages then show what the tests above made.
  describe("layout", () => {
    for (const { name, viewport, isMobile } of VIEWPORTS) {
      it(`every page fits ${name} and is axe-clean`, async () => {
        const { page } = await member(acme.id, "OWNER", viewport, isMobile);
        const busy = (await acme.api.get("/api/v1/webhook-endpoints")).body.data.find((e: any) => e.url === receiver.url);
        const endpoints = [quietEndpointId, ...(busy ? [busy.id] : [])];
        for (const p of [...PAGES, ...endpoints.map((id) => `webhooks/${id}`), "events?type=plan.created"]) {
          await page.goto(url(`/dashboard/${p}`));
          // Open every event's JSON, as a reader would.
          for (const d of (await page.locator("details").all()).slice(0, 2)) await d.locator("summary").click();
          const stage = p
            .replace(quietEndpointId, "quiet-endpoint")
            .replace(busy?.id ?? "-", "endpoint")
            .replace(/[^a-z]+/g, "-");
          expect(await seriousA11yViolations(page), stage).to.deep.equal([]);
          expect(await overflowingElements(page), stage).to.deep.equal([]);
          await page.screenshot({ path: `/tmp/dash-b-${stage}-${viewport.width}.png`, fullPage: true });
        }
      });
    }
  });
});
