import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { balances, createPlan, createWalletUser, localUrl, PIN, subscriptionsRpc, type WalletUserFixture } from "../support/subscriptions.ts";
import { advanceClock, approvedSubscription, changeEventTypes, changeOf, createChange, subscriptionOf } from "../support/change-sessions.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";

/**
 * The hosted plan-change page (/change/<token>) in headless Chromium with
 * JavaScript disabled: the same flow, form names and security rules as the
 * authorization page, with the subscription's funding asset fixed.
 */
describe("hosted plan change page (headless Chromium)", function () {
  this.timeout(60_000);
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let browser: Browser;
  let context: BrowserContext;
  let merchant: http.Server;
  let merchantBase: string;
  let basic: any;
  let pro: any;

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    api = (await sys.createMerchant("Acme Streaming")).api;
    rpc = subscriptionsRpc(sys);
    basic = await createPlan(api, { name: "Basic Monthly", amount: "10", currency: "USD", interval: "MONTH" });
    pro = await createPlan(api, { name: "Pro Monthly", amount: "25", currency: "USD", interval: "MONTH", maximumChargeAmount: "30" });
    merchant = http.createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<h1>merchant page</h1><p>${req.url}</p>`);
    });
    await new Promise<void>((resolve) => merchant.listen(0, "127.0.0.1", resolve));
    merchantBase = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}`;
  });
  after(async () => {
    rpc?.close();
    await browser?.close();
    merchant?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ javaScriptEnabled: false });
  });
  afterEach(async () => context?.close());

  async function proposal(user: WalletUserFixture, overrides: Record<string, unknown> = {}) {
    const subscriptionId = await approvedSubscription(api, rpc.client, basic.id, user.id);
    const change = await createChange(api, subscriptionId, pro.id, {
      successUrl: `${merchantBase}/changed?order=42`,
      cancelUrl: `${merchantBase}/kept`,
      ...overrides,
    });
    return { subscriptionId, change, url: localUrl(sys, change.approvalUrl) };
  }

  async function logIn(page: Page, user: WalletUserFixture, password = user.password) {
    await page.fill("input[name=email]", user.email);
    await page.fill("input[name=password]", password);
    await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=login]")]);
  }

  async function approveWith(page: Page, pin: string) {
    await page.fill("input[name=pin]", pin);
    const [response] = await Promise.all([
      page.waitForEvent("response", (r) => r.request().method() === "POST"),
      page.click("button[name=action][value=approve]"),
    ]);
    await page.waitForLoadState("load");
    return response;
  }

  it("IMMEDIATE with a charge: shows current vs requested plan and the charge, takes the PIN, charges once, switches and redirects", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const p = await proposal(user, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "7.5", reason: "Upgrade to HD" });
    const page = await context.newPage();
    const first = await page.goto(p.url);
    expect(first!.status()).to.equal(200);
    const text = await page.textContent("body");
    for (const part of [
      "Acme Streaming",
      "Change your plan to Pro Monthly",
      "Basic Monthly · 10.00 USD / month",
      "Pro Monthly · 25.00 USD / month",
      "Now",
      "7.50 USD",
      "USDT_TRON",
      "Upgrade to HD",
    ]) {
      expect(text).to.include(part);
    }
    const cookies = await context.cookies();
    expect(cookies).to.have.length(1);
    expect(cookies[0]).to.include({ httpOnly: true, sameSite: "Lax", path: new URL(p.url).pathname });

    await logIn(page, user);
    const step = await page.textContent("body");
    expect(step).to.include("Paid from");
    expect(step).to.include("Balance: 40.00 USDT_TRON");
    expect(step).to.include("Due now: 7.50 USDT_TRON");
    // The paying asset is fixed, yet [name=fundingAsset] is the same radio of asset codes as on the authorization page:
    // the only one, already checked, so the same browser steps (check it, PIN, approve) work on both pages.
    const fundingInputs = await page
      .locator("[name=fundingAsset]")
      .evaluateAll((els) => els.map((e: any) => ({ type: e.type, value: e.value, checked: e.checked })));
    expect(fundingInputs).to.deep.equal([{ type: "radio", value: "USDT_TRON", checked: true }]);
    await page.check("[name=fundingAsset][value=USDT_TRON]");
    expect(await page.textContent("button[name=action][value=approve]")).to.include("Approve and pay 7.50 USD");

    await approveWith(page, PIN);
    await page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/changed`));
    const landed = new URL(page.url());
    expect(Object.fromEntries(landed.searchParams)).to.deep.equal({
      order: "42",
      subscriptionId: p.subscriptionId,
      changeSessionId: p.change.id,
      status: "APPLIED",
    });
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("32.5");
    expect((await subscriptionOf(api, p.subscriptionId)).planId).to.equal(pro.id);

    const again = await page.goto(p.url);
    expect(again!.status()).to.equal(410);
    expect(await page.textContent("h1")).to.include("already been used");
  });

  it("NEXT_BILLING: approval schedules the change and redirects with status SCHEDULED; nothing is charged", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const p = await proposal(user);
    const page = await context.newPage();
    await page.goto(p.url);
    const text = await page.textContent("body");
    expect(text).to.include("At your next billing");
    expect(text).to.include("Nothing is charged today");
    await logIn(page, user);
    await approveWith(page, PIN);
    await page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/changed`));
    expect(new URL(page.url()).searchParams.get("status")).to.equal("SCHEDULED");
    expect((await changeOf(api, p.subscriptionId, p.change.id)).status).to.equal("SCHEDULED");
    expect((await subscriptionOf(api, p.subscriptionId)).planId).to.equal(basic.id);
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("40");
  });

  it("cancel: declines and returns to the cancel URL; the subscription keeps its plan", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const p = await proposal(user, { effectiveMode: "IMMEDIATE" });
    const page = await context.newPage();
    await page.goto(p.url);
    await logIn(page, user);
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${merchantBase}/kept`)), page.click("button[name=action][value=cancel]")]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get("status")).to.equal("DECLINED");
    expect(landed.searchParams.get("changeSessionId")).to.equal(p.change.id);
    expect((await changeOf(api, p.subscriptionId, p.change.id)).status).to.equal("DECLINED");
    expect((await subscriptionOf(api, p.subscriptionId)).planId).to.equal(basic.id);
    expect(await changeEventTypes(sys, p.change.id)).to.deep.equal(["subscription.change_session.created", "subscription.change_session.declined"]);
  });

  it("insufficient balance: the page says so and offers no approval; a form sent anyway is refused (402) and nothing changes", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "15" });
    const p = await proposal(user, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "20" });
    const page = await context.newPage();
    await page.goto(p.url);
    await logIn(page, user);
    const fixed = page.locator("[name=fundingAsset][value=USDT_TRON]");
    expect(await fixed.isDisabled()).to.equal(true);
    expect(await page.textContent(`#${(await fixed.getAttribute("aria-describedby"))!}`)).to.equal("Not enough balance to pay this now.");
    expect(await page.textContent("body")).to.include("None of your accounts can pay this now");
    expect(await page.locator("button[name=action][value=approve]").count()).to.equal(0);
    expect(await page.locator("input[name=pin]").count()).to.equal(0);
    expect(await page.locator("button[name=action][value=cancel]").count()).to.equal(1);

    // A page opened before the balance dropped still posts an approval: the service refuses it.
    const csrf = (await page.locator("input[name=csrf]").getAttribute("value"))!;
    const res = await context.request.post(p.url, { form: { csrf, action: "approve", fundingAsset: "USDT_TRON", pin: PIN }, maxRedirects: 0 });
    expect(res.status()).to.equal(402);
    await page.setContent(await res.text());
    expect(await page.textContent("[role=alert]")).to.include("balance does not cover 20 USDT_TRON");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("5");
    expect((await subscriptionOf(api, p.subscriptionId)).planId).to.equal(basic.id);
    expect((await changeOf(api, p.subscriptionId, p.change.id)).status).to.equal("PENDING_APPROVAL");
  });

  it("another wallet account cannot log in to it; wrong PINs lock after 5 tries and approval stays refused while locked", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const stranger = await createWalletUser(sys, { USDT_TRON: "50" });
    const p = await proposal(user, { effectiveMode: "IMMEDIATE", immediateChargeAmount: "1" });
    const page = await context.newPage();
    await page.goto(p.url);
    await logIn(page, stranger);
    expect(await page.textContent("[role=alert]")).to.include("different wallet account");
    await logIn(page, user);
    for (let i = 1; i <= 4; i++) {
      const wrong = await approveWith(page, "111111");
      expect(wrong.status()).to.equal(401);
      expect(await page.textContent("[role=alert]")).to.include(`${5 - i} attempt`);
    }
    expect((await approveWith(page, "111111")).status()).to.equal(423);
    const locked = await approveWith(page, PIN);
    expect(locked.status()).to.equal(423);
    expect(await page.textContent("[role=alert]")).to.include("Approval is not possible while it is locked");
    expect((await changeOf(api, p.subscriptionId, p.change.id)).status).to.equal("PENDING_APPROVAL");
    expect((await balances(sys, user.id)).USDT_TRON).to.equal("40");
  });

  it("an expired link, an unknown link and a forged form show clear pages", async () => {
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const p = await proposal(user);
    const forged = await fetch(p.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ action: "cancel", csrf: "forged" }).toString(),
      redirect: "manual",
    });
    expect(forged.status).to.equal(403);
    expect((await changeOf(api, p.subscriptionId, p.change.id)).status).to.equal("PENDING_APPROVAL");

    const page = await context.newPage();
    await advanceClock(sys, 61 * 60);
    const res = await page.goto(p.url);
    expect(res!.status()).to.equal(410);
    expect(await page.textContent("h1")).to.equal("This link has expired");
    const unknown = await page.goto(`${sys.baseUrl}/change/${"A".repeat(43)}`);
    expect(unknown!.status()).to.equal(404);
    expect(await page.textContent("h1")).to.equal("Link not found");
  });

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    it(`reads well at ${name}: every step has no serious or critical axe violation and nothing wider than the screen`, async () => {
      const user = await createWalletUser(sys, { USDT_TRON: "50" });
      const p = await proposal(user, {
        effectiveMode: "IMMEDIATE",
        immediateChargeAmount: "7.5",
        reason: "Upgrade to HD: every channel, four screens at once",
      });
      const wide = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      try {
        const page = await wide.newPage();
        const check = async (step: string) => {
          expect(await seriousA11yViolations(page), step).to.deep.equal([]);
          expect(await overflowingElements(page), step).to.deep.equal([]);
        };
        await page.goto(p.url);
        await check("login");
        await logIn(page, user);
        await check("approval");
        await approveWith(page, "000000");
        await check("wrong PIN");
      } finally {
        await wide.close();
      }
    });
  }
});
