import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import {
  createPlan,
  createSubscription,
  createWalletUser,
  eventsOf,
  localUrl,
  PIN,
  subscriptionsRpc,
  type WalletUserFixture,
} from "../support/subscriptions.ts";
import { advanceTo, approvedSubscription, DAY } from "../support/billing.ts";
import { settle } from "../support/sweeps.ts";

/**
 * Issue 26's pages in a real headless Chromium with JavaScript off, at 1280
 * and 390 px, axe clean: the funding fallback selects inside the approval
 * form (the same PIN approves both) and in each live subscription's form on
 * the self-service page (action=change-funding-fallback), and the at-risk
 * warning on the self-service card with the shortfall.
 */
describe("funding fallback and at-risk warning on the hosted pages (headless Chromium)", function () {
  this.timeout(90_000);
  let api: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;
  let browser: Browser;

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    const merchant = await sys.createMerchant("Acme Streaming");
    api = merchant.api;
    // The at-risk check runs at the notice, 5 days before a charge.
    expect((await api.request("PATCH", "/api/v1/settings/billing", { body: { chargeNoticeDays: 5 } })).status).to.equal(200);
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
    await browser?.close();
  });

  async function logIn(page: Page, user: WalletUserFixture) {
    await page.fill("input[name=email]", user.email);
    await page.fill("input[name=password]", user.password);
    await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=login]")]);
  }

  async function submit(page: Page, button: Locator) {
    const [response] = await Promise.all([page.waitForEvent("response", (r) => r.request().method() === "POST"), button.click()]);
    await page.waitForLoadState("load");
    return response;
  }

  const optionValues = (select: Locator) => select.locator("option").evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    describe(name, () => {
      let context: BrowserContext;
      beforeEach(async () => {
        context = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      });
      afterEach(async () => context?.close());

      it("approval page: two fallback selects inside the approval form; the funding asset as a fallback is refused in words; one PIN approves asset and fallbacks", async () => {
        const plan = await createPlan(api, { name: "Pro Monthly", amount: "10.50", currency: "USD" });
        const user = await createWalletUser(sys, { USDT_TRON: "50", USDC_ETH: "40", BTC: "1" });
        const s = await createSubscription(api, plan.id, user.id);
        const page = await context.newPage();
        await page.goto(localUrl(sys, s.authorizationUrl));
        await logIn(page, user);
        const form = page.locator("form", { has: page.locator("button[name=action][value=approve]") });
        const first = form.locator("select[name=fallbackAsset1]");
        const second = form.locator("select[name=fallbackAsset2]");
        expect(await optionValues(first)).to.have.members(["", "USDT_TRON", "USDC_ETH", "BTC", "ETH"]);
        expect(await optionValues(second)).to.have.members(["", "USDT_TRON", "USDC_ETH", "BTC", "ETH"]);
        expect(await first.inputValue()).to.equal("");
        expect(await page.textContent(`label[for="${await first.getAttribute("id")}"]`)).to.equal("First fallback");
        expect(await seriousA11yViolations(page)).to.deep.equal([]);
        expect(await overflowingElements(page)).to.deep.equal([]);

        await page.check("[name=fundingAsset][value=USDT_TRON]");
        await first.selectOption("USDT_TRON");
        await page.fill("input[name=pin]", PIN);
        const refused = await submit(page, form.locator("button[name=action][value=approve]"));
        expect(refused!.status()).to.equal(422);
        expect(await page.textContent("[role=alert]")).to.include("USDT_TRON already pays");
        expect(await page.locator("select[name=fallbackAsset1]").inputValue()).to.equal("USDT_TRON");
        expect((await api.get(`/api/v1/subscriptions/${s.subscriptionId}`)).body.status).to.equal("PENDING_APPROVAL");

        await page.check("[name=fundingAsset][value=USDT_TRON]");
        await page.locator("select[name=fallbackAsset1]").selectOption("USDC_ETH");
        await page.locator("select[name=fallbackAsset2]").selectOption("BTC");
        await page.fill("input[name=pin]", PIN);
        const approved = await submit(page, page.locator("button[name=action][value=approve]"));
        expect(approved!.status()).to.equal(303);
        const sub = (await api.get(`/api/v1/subscriptions/${s.subscriptionId}`)).body;
        expect(sub).to.deep.include({ status: "ACTIVE", fundingAsset: "USDT_TRON", fallbackAssets: ["USDC_ETH", "BTC"] });
      });

      it("self-service page: fallbacks changed with the PIN (change-funding-fallback), then the at-risk warning with the shortfall", async () => {
        const user = await createWalletUser(sys, { USDT_TRON: "10", USDC_ETH: "2", BTC: "1" });
        const { subscriptionId } = await approvedSubscription(sys, api, client, { plan: { name: "Basic", amount: "10", interval: "MONTH" }, user });
        const page = await context.newPage();
        await page.goto(`${sys.baseUrl}/wallet/subscriptions`);
        await logIn(page, user);
        const card = page.locator(`section[data-subscription-id="${subscriptionId}"]`);
        const form = card.locator("form");
        expect(await card.locator("[data-at-risk]").count()).to.equal(0);
        // Every account that can pay the plan (an empty one too), except the one that pays.
        expect(await optionValues(form.locator("select[name=fallbackAsset1]"))).to.have.members(["", "USDC_ETH", "BTC", "ETH"]);
        expect(await form.locator("input[name=pin]").count()).to.equal(1);

        // The same asset twice: refused in the card, nothing changed.
        await form.locator("select[name=fallbackAsset1]").selectOption("USDC_ETH");
        await form.locator("select[name=fallbackAsset2]").selectOption("USDC_ETH");
        await form.locator("input[name=pin]").fill(PIN);
        const twice = await submit(page, form.locator("button[name=action][value=change-funding-fallback]"));
        expect(twice!.status()).to.equal(422);
        expect(await card.locator("[role=alert]").textContent()).to.include("two different fallback assets");

        await form.locator("select[name=fallbackAsset1]").selectOption("USDC_ETH");
        await form.locator("select[name=fallbackAsset2]").selectOption("");
        await form.locator("input[name=pin]").fill(PIN);
        const saved = await submit(page, form.locator("button[name=action][value=change-funding-fallback]"));
        expect(saved!.status()).to.equal(303);
        expect(await page.textContent("[role=status]")).to.include("now falls back to USDC_ETH");
        expect(await form.locator("select[name=fallbackAsset1]").inputValue()).to.equal("USDC_ETH");
        expect((await api.get(`/api/v1/subscriptions/${subscriptionId}`)).body.fallbackAssets).to.deep.equal(["USDC_ETH"]);
        expect((await eventsOf(sys, subscriptionId)).map((e) => e.type)).to.include("subscription.funding_fallback_changed");

        // The notice is due: 0 USDT_TRON and 2 USDC_ETH cannot pay 10 USD.
        const active = (await api.get(`/api/v1/subscriptions/${subscriptionId}`)).body;
        await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) - 4 * DAY * 1000));
        await settle(sys);
        await page.goto(`${sys.baseUrl}/wallet/subscriptions`);
        const warning = card.locator("[data-at-risk]");
        expect(await warning.count()).to.equal(1);
        const text = (await warning.textContent())!;
        expect(text).to.include("may fail").and.include("10.00 USDT_TRON short");
        expect(await seriousA11yViolations(page)).to.deep.equal([]);
        expect(await overflowingElements(page)).to.deep.equal([]);
      });
    });
  }
});
