import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { balances, createPlan, createSubscription, createWalletUser, eventsOf, localUrl, PIN, type WalletUserFixture } from "../support/subscriptions.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The hosted authorization page in a real headless Chromium, with JavaScript
 * disabled (the page must work without it), driven only through the stable
 * form names: email, password, fundingAsset, pin, action=approve|cancel.
 */
describe("hosted authorization page (headless Chromium)", function () {
  this.timeout(60_000);
  let api: ApiClient;
  let browser: Browser;
  let context: BrowserContext;
  let merchant: http.Server;
  let merchantBase: string;
  let plan: any;

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    api = (await sys.createMerchant("Acme Streaming")).api;
    plan = await createPlan(api, {
      name: "Pro Monthly",
      amount: "10.50",
      currency: "USD",
      interval: "MONTH",
      maximumChargeAmount: "15",
      description: "All channels, HD",
    });
    // The merchant's site, where the customer lands after approving or cancelling.
    merchant = http.createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<h1>merchant page</h1><p>${req.url}</p>`);
    });
    await new Promise<void>((resolve) => merchant.listen(0, "127.0.0.1", resolve));
    merchantBase = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}`;
  });
  after(async () => {
    await browser?.close();
    merchant?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ javaScriptEnabled: false });
  });
  afterEach(async () => context?.close());

  async function subscribe(user: WalletUserFixture, overrides: Record<string, unknown> = {}) {
    const s = await createSubscription(api, (overrides.planId as string) ?? plan.id, user.id, {
      successUrl: `${merchantBase}/success?order=42`,
      cancelUrl: `${merchantBase}/cancel`,
      ...overrides,
    });
    return { ...s, url: localUrl(sys, s.authorizationUrl) };
  }

  async function logIn(page: Page, user: WalletUserFixture, password = user.password) {
    await page.fill("input[name=email]", user.email);
    await page.fill("input[name=password]", password);
    await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=login]")]);
  }

  async function approveWith(page: Page, asset: string, pin: string) {
    await page.check(`[name=fundingAsset][value=${asset}]`);
    await page.fill("input[name=pin]", pin);
    const [response] = await Promise.all([
      page.waitForEvent("response", (r) => r.request().method() === "POST"),
      page.click("button[name=action][value=approve]"),
    ]);
    await page.waitForLoadState("load");
    return response;
  }

  const status = async (id: string) => (await api.get(`/api/v1/subscriptions/${id}`)).body;

  it("approve: shows a real checkout, logs in, picks the asset, takes the PIN, debits once and redirects with the result", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const page = await context.newPage();
    const first = await page.goto(s.url);
    expect(first!.status()).to.equal(200);
    const text = await page.textContent("body");
    for (const part of ["Acme Streaming", "Pro Monthly", "10.50 USD / month", "Maximum per charge", "15.00 USD", "All channels, HD"])
      expect(text).to.include(part);

    const cookies = await context.cookies();
    expect(cookies).to.have.length(1);
    expect(cookies[0]).to.include({ httpOnly: true, sameSite: "Lax" });

    await logIn(page, user);
    const assetText = await page.textContent("body");
    expect(assetText).to.include("Balance: 50.00 USDT_TRON").and.include("Due now: 10.50 USDT_TRON");
    expect(await page.locator("[name=fundingAsset]").count()).to.be.greaterThan(0);

    await approveWith(page, "USDT_TRON", PIN);
    await page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/success`));
    const landed = new URL(page.url());
    expect(landed.searchParams.get("subscriptionId")).to.equal(s.subscriptionId);
    expect(landed.searchParams.get("status")).to.equal("ACTIVE");
    expect(landed.searchParams.get("order")).to.equal("42");

    expect((await balances(sys, user.id)).USDT_TRON).to.equal("39.5");
    expect(await status(s.subscriptionId)).to.include({ status: "ACTIVE", fundingAsset: "USDT_TRON" });

    // The link is single-use: back on it, the customer reads that it was used; nothing moves again.
    const again = await page.goto(s.url);
    expect(again!.status()).to.equal(410);
    expect(await page.textContent("h1")).to.include("already been used");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("39.5");
  });

  it("cancel: declines the authorization and returns to the cancel URL", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const page = await context.newPage();
    await page.goto(s.url);
    await logIn(page, user);
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/cancel`)), page.click("button[name=action][value=cancel]")]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get("subscriptionId")).to.equal(s.subscriptionId);
    expect(landed.searchParams.get("status")).to.equal("CANCELLED");
    const body = await status(s.subscriptionId);
    expect(body).to.include({ status: "CANCELLED", cancellationReason: "AUTHORIZATION_DECLINED" });
    expect(body.authorization.status).to.equal("DECLINED");
    expect((await eventsOf(sys, s.subscriptionId)).map((e) => e.type)).to.include("subscription.authorization_declined");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("50");
  });

  it("a form sent without pressing a button (script submit) counts as the step's default button: log in, then approve", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    // JavaScript on, only to call form.submit(), which sends no button (so no action field), unlike Enter or a click.
    const scripted = await browser.newContext();
    try {
      const page = await scripted.newPage();
      await page.goto(s.url);
      await page.fill("input[name=email]", user.email);
      await page.fill("input[name=password]", user.password);
      // POST → 303 → GET of the same page, now at the funding step.
      await Promise.all([page.waitForURL(s.url, { waitUntil: "commit" }), page.$eval("form", (form: any) => form.submit())]);
      await page.waitForSelector("input[name=pin]", { timeout: 5_000 });
      await page.check("[name=fundingAsset][value=USDT_TRON]");
      await page.fill("input[name=pin]", PIN);
      await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/success`)), page.$eval("form", (form: any) => form.submit())]);
      expect(new URL(page.url()).searchParams.get("status")).to.equal("ACTIVE");
      expect((await balances(sys, user.id)).USDT_TRON).to.equal("39.5");
    } finally {
      await scripted.close();
    }
  });

  it("a wrong password or another wallet account is refused with a message", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const stranger = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const page = await context.newPage();
    await page.goto(s.url);
    await logIn(page, user, "not the password");
    expect(await page.textContent("[role=alert]")).to.include("email or password is incorrect");
    await logIn(page, stranger);
    expect(await page.textContent("[role=alert]")).to.include("different wallet account");
    expect(await page.locator("input[name=pin]").count()).to.equal(0);
  });

  it("login attempts are rate-limited: after 10 failures even the right password waits", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const page = await context.newPage();
    await page.goto(s.url);
    for (let i = 0; i < 10; i++) await logIn(page, user, `wrong-password-${i}`);
    expect(await page.textContent("[role=alert]")).to.include("incorrect");
    const [limited] = await Promise.all([page.waitForEvent("response", (r) => r.request().method() === "POST"), logIn(page, user)]);
    expect(limited.status()).to.equal(429);
    expect(await page.textContent("[role=alert]")).to.include("Too many failed logins");
    expect(await page.locator("input[name=pin]").count()).to.equal(0);
  });

  it("wrong PIN: says so with the tries left, then the right PIN approves", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const page = await context.newPage();
    await page.goto(s.url);
    await logIn(page, user);
    const res = await approveWith(page, "USDT_TRON", "000000");
    expect(res.status()).to.equal(401);
    expect(await page.textContent("[role=alert]")).to.include("Wrong PIN. 4 attempts left");
    expect((await status(s.subscriptionId)).status).to.equal("PENDING_APPROVAL");
    await approveWith(page, "USDT_TRON", PIN);
    await page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/success`));
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("39.5");
  });

  it("locks the PIN after 5 wrong tries and refuses approval while locked, even with the right PIN", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const page = await context.newPage();
    await page.goto(s.url);
    await logIn(page, user);
    for (let i = 1; i <= 4; i++) {
      await approveWith(page, "USDT_TRON", "111111");
      expect(await page.textContent("[role=alert]")).to.include(`${5 - i} attempt`);
    }
    const fifth = await approveWith(page, "USDT_TRON", "111111");
    expect(fifth.status()).to.equal(423);
    expect(await page.textContent("[role=alert]")).to.include("locked");
    const locked = await approveWith(page, "USDT_TRON", PIN);
    expect(locked.status()).to.equal(423);
    expect(await page.textContent("[role=alert]")).to.include("Approval is not possible while it is locked");
    expect((await status(s.subscriptionId)).status).to.equal("PENDING_APPROVAL");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("50");
    expect((await sys.admin.get(`/admin/v1/wallet-users/${user.id}`)).body.pinLocked).to.equal(true);
  });

  it("insufficient balance: that asset cannot be chosen and says why; a form that sends it anyway is refused (402); another asset then pays", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "1", USDC_ETH: "100" });
    const s = await subscribe(user);
    const page = await context.newPage();
    await page.goto(s.url);
    await logIn(page, user);
    const low = page.locator("[name=fundingAsset][value=USDT_TRON]");
    expect(await low.isDisabled()).to.equal(true);
    expect(await low.isChecked()).to.equal(false);
    // The reason is beside it, and tied to it for screen readers.
    const reason = page.locator(`#${(await low.getAttribute("aria-describedby"))!}`);
    expect(await reason.textContent()).to.equal("Not enough balance to pay this now.");
    expect(await reason.isVisible()).to.equal(true);
    expect(await page.locator("[name=fundingAsset][value=USDC_ETH]").isChecked()).to.equal(true);

    // A page opened before the balance dropped still posts it: the service refuses, nothing moves.
    const csrf = (await page.locator("input[name=csrf]").getAttribute("value"))!;
    const stale = await context.request.post(s.url, { form: { csrf, action: "approve", fundingAsset: "USDT_TRON", pin: PIN }, maxRedirects: 0 });
    expect(stale.status()).to.equal(402);
    await page.setContent(await stale.text());
    expect(await page.textContent("[role=alert]")).to.include("balance does not cover");

    await page.goto(s.url);
    await approveWith(page, "USDC_ETH", PIN);
    await page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/success`));
    expect(await balances(sys, user.id)).to.include({ USDT_TRON: "1", USDC_ETH: "89.5" });
    expect((await status(s.subscriptionId)).fundingAsset).to.equal("USDC_ETH");
  });

  it("a trial plan approves without a charge, even from a balance below one charge (chosen with a warning)", async () => {
    const trial = await createPlan(api, { name: "Trial Plan", amount: "5", trialDays: 7 });
    const user = await createWalletUser(sys, { USDT_TRON: "0.5" });
    const s = await subscribe(user, { planId: trial.id });
    const page = await context.newPage();
    await page.goto(s.url);
    expect(await page.textContent("body")).to.include("7 days");
    await logIn(page, user);
    // Nothing is due now, so a low balance is a warning, not a reason to refuse the asset.
    const low = page.locator("[name=fundingAsset][value=USDT_TRON]");
    expect(await low.isDisabled()).to.equal(false);
    expect(await page.textContent(`#${(await low.getAttribute("aria-describedby"))!}`)).to.include("Balance below one charge");
    expect(await page.textContent("body")).to.include("5.00 USDT_TRON per charge");
    await approveWith(page, "USDT_TRON", PIN);
    await page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/success`));
    expect(new URL(page.url()).searchParams.get("status")).to.equal("TRIALING");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("0.5");
  });

  it("expired, unknown and stale links show a clear page, never a stack trace", async () => {
    const user = await createWalletUser(sys);
    const s = await subscribe(user, { authorizationExpiresInMinutes: 5 });
    const page = await context.newPage();
    await page.goto(s.url);
    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 301 });
    const res = await eventually(
      async () => {
        const answer = await page.goto(s.url);
        return answer!.status() === 410 && answer;
      },
      5_000,
      "the page to say the link expired",
      100,
    );
    expect(res!.status()).to.equal(410);
    expect(res!.headers()["content-type"]).to.include("text/html");
    expect(await page.textContent("h1")).to.equal("This link has expired");

    const unknown = await page.goto(`${sys.baseUrl}/authorize/${"A".repeat(43)}`);
    expect(unknown!.status()).to.equal(404);
    expect(await page.textContent("h1")).to.equal("Link not found");
    const garbage = await page.goto(`${sys.baseUrl}/authorize/%E0%A4%A`);
    expect([400, 404]).to.include(garbage!.status());
    expect(await page.content()).to.not.match(/at .*\.ts:\d+|Error:/);
  });

  it("refuses a form posted without the page's CSRF token or session", async () => {
    const user = await createWalletUser(sys);
    const s = await subscribe(user);
    const res = await fetch(s.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ action: "cancel", csrf: "forged" }).toString(),
      redirect: "manual",
    });
    expect(res.status).to.equal(403);
    expect(res.headers.get("content-type")).to.include("text/html");
    expect((await status(s.subscriptionId)).status).to.equal("PENDING_APPROVAL");
  });

  it("fits a phone screen", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await subscribe(user);
    const phone = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 360, height: 740 }, isMobile: true });
    try {
      const page = await phone.newPage();
      await page.goto(s.url);
      await logIn(page, user);
      const box = await page.locator("button[name=action][value=approve]").boundingBox();
      expect(box!.x).to.be.at.least(0);
      expect(box!.x + box!.width).to.be.at.most(360);
      const email = await page.locator("[name=fundingAsset]").first().boundingBox();
      expect(email!.x + email!.width).to.be.at.most(360);
    } finally {
      await phone.close();
    }
  });

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    it(`reads well at ${name}: every step has no serious or critical axe violation and nothing wider than the screen`, async () => {
      const user = await createWalletUser(sys, { USDT_TRON: "50", USDC_ETH: "1" });
      const s = await subscribe(user);
      const wide = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      try {
        const page = await wide.newPage();
        const check = async (step: string) => {
          expect(await seriousA11yViolations(page), step).to.deep.equal([]);
          expect(await overflowingElements(page), step).to.deep.equal([]);
        };
        await page.goto(s.url);
        await check("login");
        await logIn(page, user, "wrong password");
        await check("login refused");
        await logIn(page, user);
        await check("funding (one asset too low)");
        await approveWith(page, "USDT_TRON", "000000");
        await check("wrong PIN");
        await page.goto(`${sys.baseUrl}/authorize/${"A".repeat(43)}`);
        await check("unknown link");
      } finally {
        await wide.close();
      }
    });
  }
});
