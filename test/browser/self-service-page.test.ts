import { expect } from "chai";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { createPlan, createWalletUser, credit, eventsOf, PIN, subscriptionsRpc, type WalletUserFixture } from "../support/subscriptions.ts";
import { eventually } from "../support/eventually.ts";
import { approvedSubscription, changeOf, createChange } from "../support/change-sessions.ts";

/**
 * The customer's self-service page (/wallet/subscriptions) in a real headless
 * Chromium with JavaScript disabled, at desktop and phone widths, driven only
 * through the form-name contract: email, password, action=login|logout;
 * per subscription subscriptionId, fundingAsset, pin,
 * action=cancel-subscription|change-funding-asset.
 */
describe("customer self-service page (headless Chromium)", function () {
  this.timeout(90_000);
  let acme: ApiClient;
  let globex: ApiClient;
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;
  let browser: Browser;

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    acme = (await sys.createMerchant("Acme Streaming")).api;
    globex = (await sys.createMerchant("Globex News")).api;
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
    await browser?.close();
  });

  const pageUrl = () => `${sys.baseUrl}/wallet/subscriptions`;
  const subscriptionOf = async (api: ApiClient, id: string) => (await api.get(`/api/v1/subscriptions/${id}`)).body;

  /** A customer with an Acme subscription (paid, USDT_TRON) and a Globex one on a trial, plus a cancelled one. */
  async function customer() {
    const user = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "40" });
    const pro = await createPlan(acme, { name: "Pro Monthly", amount: "10.50", maximumChargeAmount: "15" });
    const news = await createPlan(globex, { name: "Daily Digest", amount: "4", interval: "WEEK", trialDays: 14 });
    const old = await approvedSubscription(acme, client, pro.id, user.id);
    await acme.post(`/api/v1/subscriptions/${old}/cancel`);
    const acmeSub = await approvedSubscription(acme, client, pro.id, user.id);
    const globexSub = await approvedSubscription(globex, client, news.id, user.id);
    return { user, pro, news, old, acmeSub, globexSub };
  }

  async function logIn(page: Page, user: WalletUserFixture, password = user.password) {
    await page.goto(pageUrl());
    await page.fill("input[name=email]", user.email);
    await page.fill("input[name=password]", password);
    await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=login]")]);
  }

  /** The one form of a subscription (it holds subscriptionId, fundingAsset radios, pin and both buttons). */
  const formOf = (page: Page, id: string): Locator => page.locator("form", { has: page.locator(`input[name=subscriptionId][value="${id}"]`) });

  async function submit(page: Page, form: Locator, action: string) {
    const [response] = await Promise.all([
      page.waitForEvent("response", (r) => r.request().method() === "POST"),
      form.locator(`button[name=action][value=${action}]`).click(),
    ]);
    await page.waitForLoadState("load");
    return response;
  }

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    describe(name, () => {
      let context: BrowserContext;
      beforeEach(async () => {
        context = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      });
      afterEach(async () => context?.close());

      it("logs in and lists every subscription across merchants, live first, with price, status, asset, dates, cap and charges", async () => {
        const { user, acmeSub, globexSub, old } = await customer();
        const stranger = await createWalletUser(sys, { USDT_TRON: "100" });
        const strangers = await approvedSubscription(acme, client, (await createPlan(acme, { name: "Stranger Plan" })).id, stranger.id);
        // Part of the first Acme charge is refunded: the page shows it.
        const [charge] = (await acme.get(`/api/v1/subscriptions/${acmeSub}/charges`)).body.data;
        const refund = await acme.post("/api/v1/refunds", { chargeId: charge.id, amount: "5" });
        expect(refund.status, refund.text).to.be.oneOf([200, 201, 202]);
        await eventually(async () => ((await acme.get(`/api/v1/refunds/${refund.body.id}`)).body.status === "SUCCEEDED" ? true : undefined), 15_000, "refund");
        const page = await context.newPage();
        const first = await page.goto(pageUrl());
        expect(first!.status()).to.equal(200);
        expect(first!.headers()["content-security-policy"])
          .to.include("default-src 'none'")
          .and.include("form-action 'self'")
          .and.include("frame-ancestors 'none'");
        expect(first!.headers()["cache-control"]).to.equal("no-store");
        const [cookie] = await context.cookies();
        expect(cookie).to.include({ httpOnly: true, sameSite: "Lax", path: "/wallet/subscriptions" });
        expect(await seriousA11yViolations(page), "login page").to.deep.equal([]);

        await logIn(page, user);
        const cards = await page.locator("section[data-subscription-id]").all();
        const cardIds = await Promise.all(cards.map((c) => c.getAttribute("data-subscription-id")));
        // Live ones first (newest first), then the ended one.
        expect(cardIds).to.deep.equal([globexSub, acmeSub, old]);
        expect(cardIds).not.to.include(strangers);

        const acmeCard = page.locator(`section[data-subscription-id="${acmeSub}"]`);
        const acmeText = (await acmeCard.textContent())!;
        // Words for people, one rule for amounts (at least two decimals, whatever the currency or asset).
        for (const part of [
          "Acme Streaming",
          "Pro Monthly",
          "10.50 USD / month",
          "Active",
          "Pays with",
          "USDT_TRON",
          "Next charge",
          "Maximum per charge",
          "15.00 USD",
          "Paid",
          "10.50 USDT_TRON",
          "Refunded",
          "5.00 USD (5.00 USDT_TRON)",
        ]) {
          expect(acmeText).to.include(part);
        }
        expect(await acmeCard.getAttribute("data-status")).to.equal("ACTIVE");
        expect(await acmeCard.locator("tbody tr").first().getAttribute("data-status")).to.equal("SUCCEEDED");
        const globexCard = page.locator(`section[data-subscription-id="${globexSub}"]`);
        const globexText = (await globexCard.textContent())!;
        for (const part of ["Globex News", "Daily Digest", "4.00 USD / week", "Free trial", "Trial ends", "No charges yet"])
          expect(globexText).to.include(part);
        expect(await globexCard.getAttribute("data-status")).to.equal("TRIALING");
        const oldCard = page.locator(`section[data-subscription-id="${old}"]`);
        expect(await oldCard.textContent())
          .to.include("Cancelled")
          .and.include(`by Acme Streaming`);
        expect(await oldCard.getAttribute("data-status")).to.equal("CANCELLED");
        expect(await oldCard.locator("form").count()).to.equal(0);
        // No status or reason code is shown to the customer (they stay in data attributes).
        const shown = await page.locator("body").innerText();
        for (const code of ["ACTIVE", "TRIALING", "CANCELLED", "SUCCEEDED", "MERCHANT_CANCELLED"]) expect(shown).not.to.include(code);

        // Each live subscription: one form with its id, the radios with balances, the PIN and both buttons.
        const form = formOf(page, acmeSub);
        expect(await form.count()).to.equal(1);
        expect(await form.locator("input[name=pin]").count()).to.equal(1);
        expect(await form.locator("button[name=action][value=cancel-subscription]").count()).to.equal(1);
        expect(await form.locator("button[name=action][value=change-funding-asset]").count()).to.equal(1);
        expect(await form.locator("[name=fundingAsset][value=USDT_TRON]").isChecked()).to.equal(true);
        expect(await form.textContent())
          .to.include("Balance: 84.00 USDT_TRON")
          .and.include("Balance: 40.00 USDC_ETH");

        if (isMobile) {
          for (const selector of ["button[name=action][value=cancel-subscription]", "input[name=pin]", "[name=fundingAsset]"]) {
            const box = await form.locator(selector).first().boundingBox();
            expect(box!.x, selector).to.be.at.least(0);
            expect(box!.x + box!.width, selector).to.be.at.most(390);
          }
          const main = await page.locator("main").boundingBox();
          expect(main!.width).to.be.at.most(390);
        }
        expect(await seriousA11yViolations(page)).to.deep.equal([]);
        expect(await overflowingElements(page)).to.deep.equal([]);
      });

      it("the charges fit the card: every column, Refunded included, is on screen and nothing is wider than the viewport", async () => {
        const { user, acmeSub } = await customer();
        const [charge] = (await acme.get(`/api/v1/subscriptions/${acmeSub}/charges`)).body.data;
        const refund = await acme.post("/api/v1/refunds", { chargeId: charge.id, amount: "1.25" });
        await eventually(async () => ((await acme.get(`/api/v1/refunds/${refund.body.id}`)).body.status === "SUCCEEDED" ? true : undefined), 15_000, "refund");
        const page = await context.newPage();
        await logIn(page, user);
        const card = page.locator(`section[data-subscription-id="${acmeSub}"]`);
        const width = viewport.width;
        for (const cell of await card.locator("tbody td").all()) {
          const box = (await cell.boundingBox())!;
          expect(box.x, (await cell.textContent()) ?? "").to.be.at.least(0);
          expect(box.x + box.width, (await cell.textContent()) ?? "").to.be.at.most(width);
        }
        const refunded = card.locator("tbody td[data-label=Refunded]").first();
        expect(await refunded.textContent()).to.equal("1.25 USD (1.25 USDT_TRON)");
        expect(await refunded.isVisible()).to.equal(true);
        expect(await overflowingElements(page)).to.deep.equal([]);
        const { scrollWidth, clientWidth } = await page.evaluate(() => {
          const { documentElement } = (globalThis as any).document;
          return { scrollWidth: documentElement.scrollWidth as number, clientWidth: documentElement.clientWidth as number };
        });
        expect(scrollWidth).to.be.at.most(clientWidth);
      });

      it("an ended subscription says what its charges were paid with, not the asset that would have paid the next one", async () => {
        const user = await createWalletUser(sys, { USDT_TRON: "100", USDC_ETH: "40" });
        const plan = await createPlan(acme, { name: "Paid Then Moved", amount: "3" });
        const id = await approvedSubscription(acme, client, plan.id, user.id, "USDT_TRON");
        await client.changeFundingAsset({ walletUserId: user.id, subscriptionId: id, asset: "USDC_ETH" });
        await client.cancelSubscriptionForCustomer({ walletUserId: user.id, subscriptionId: id });
        expect(await subscriptionOf(acme, id)).to.include({ status: "CANCELLED", fundingAsset: "USDC_ETH" });
        const page = await context.newPage();
        await logIn(page, user);
        const card = page.locator(`section[data-subscription-id="${id}"]`);
        expect(await card.locator("dt:text-is('Paid with') + dd").textContent()).to.equal("USDT_TRON");
        expect(await card.locator("tbody td[data-label=Paid]").first().textContent()).to.equal("3.00 USDT_TRON");
        expect(await card.locator("dt:text-is('Pays with')").count()).to.equal(0);
        expect(await card.textContent()).not.to.include("USDC_ETH");
      });

      it("cancels with the right PIN: CANCELLED by the customer, the page says so, the scheduled change goes with it", async () => {
        const { user, acmeSub, pro } = await customer();
        const bigger = await createPlan(acme, { name: "Pro Plus", amount: "20" });
        const change = await createChange(acme, acmeSub, bigger.id, { effectiveMode: "NEXT_BILLING" });
        await client.approveChangeSession({ token: new URL(change.approvalUrl).pathname.split("/").pop()!, walletUserId: user.id });
        const page = await context.newPage();
        await logIn(page, user);
        const form = formOf(page, acmeSub);
        await form.locator("input[name=pin]").fill(PIN);
        const response = await submit(page, form, "cancel-subscription");
        expect(response.status()).to.equal(303);
        expect(await page.textContent("[role=status]")).to.include(`Your subscription to ${pro.name} with Acme Streaming is cancelled`);
        expect(await page.locator("[role=alert]").count()).to.equal(0);
        const card = page.locator(`section[data-subscription-id="${acmeSub}"]`);
        expect(await card.getAttribute("data-status")).to.equal("CANCELLED");
        expect(await card.textContent())
          .to.include("Cancelled")
          .and.include("by you")
          .and.not.include("CUSTOMER_CANCELLED");
        expect(await seriousA11yViolations(page)).to.deep.equal([]);
        expect(await formOf(page, acmeSub).count()).to.equal(0);

        expect(await subscriptionOf(acme, acmeSub)).to.include({ status: "CANCELLED", cancellationReason: "CUSTOMER_CANCELLED" });
        expect(await changeOf(acme, acmeSub, change.id)).to.include({ status: "CANCELLED" });
        expect((await eventsOf(sys, acmeSub)).filter((e) => e.type === "subscription.cancelled")).to.have.length(1);
      });

      it("refuses a wrong PIN with the tries left in [role=alert] and changes nothing", async () => {
        const { user, acmeSub } = await customer();
        const page = await context.newPage();
        await logIn(page, user);
        let form = formOf(page, acmeSub);
        await form.locator("input[name=pin]").fill("000000");
        const response = await submit(page, form, "cancel-subscription");
        expect(response.status()).to.equal(401);
        expect(await page.textContent("[role=alert]")).to.include("Wrong PIN. 4 attempts left");
        expect(await seriousA11yViolations(page)).to.deep.equal([]);
        expect(await overflowingElements(page)).to.deep.equal([]);
        form = formOf(page, acmeSub);
        await form.locator("input[name=pin]").fill("111111");
        await submit(page, form, "change-funding-asset");
        expect(await page.textContent("[role=alert]")).to.include("3 attempts left");
        expect(await subscriptionOf(acme, acmeSub)).to.include({ status: "ACTIVE", fundingAsset: "USDT_TRON" });
      });

      it("changes the funding asset with the PIN: the merchant sees the new asset, one event", async () => {
        const { user, acmeSub } = await customer();
        const page = await context.newPage();
        await logIn(page, user);
        const form = formOf(page, acmeSub);
        await form.locator("[name=fundingAsset][value=USDC_ETH]").check();
        await form.locator("input[name=pin]").fill(PIN);
        const response = await submit(page, form, "change-funding-asset");
        expect(response.status()).to.equal(303);
        expect(await page.textContent("[role=status]")).to.include("is now paid with USDC_ETH");
        expect(await formOf(page, acmeSub).locator("[name=fundingAsset][value=USDC_ETH]").isChecked()).to.equal(true);
        expect((await subscriptionOf(acme, acmeSub)).fundingAsset).to.equal("USDC_ETH");
        const events = (await eventsOf(sys, acmeSub)).filter((e) => e.type === "subscription.funding_asset_changed");
        expect(events).to.have.length(1);
        expect(events[0]!.data).to.include({ fundingAsset: "USDC_ETH", previousFundingAsset: "USDT_TRON" });
      });

      it("logs out: the list is gone, the login form is back", async () => {
        const { user } = await customer();
        const page = await context.newPage();
        await logIn(page, user);
        expect(await page.locator("section[data-subscription-id]").count()).to.be.greaterThan(0);
        await Promise.all([page.waitForLoadState("load"), page.click("button[name=action][value=logout]")]);
        expect(await page.locator("input[name=email]").count()).to.equal(1);
        expect(await page.locator("section[data-subscription-id]").count()).to.equal(0);
        await page.goto(pageUrl());
        expect(await page.locator("input[name=password]").count()).to.equal(1);
        expect(await page.locator("input[name=subscriptionId]").count()).to.equal(0);
      });

      it("another customer's subscription id in the form gets the unknown-id answer and nothing changes", async () => {
        const { user } = await customer();
        const other = await customer();
        const page = await context.newPage();
        await logIn(page, user);
        const csrf = (await page.locator("input[name=csrf]").first().getAttribute("value"))!;
        // The form as the browser would send it, with the hidden id swapped (same cookies, same CSRF token).
        const post = async (subscriptionId: string) => {
          const res = await context.request.post(pageUrl(), {
            form: { csrf, subscriptionId, pin: PIN, action: "cancel-subscription" },
            maxRedirects: 0,
          });
          const html = await res.text();
          await page.setContent(html);
          return { status: res.status(), alert: await page.textContent("[role=alert]") };
        };
        const theirs = await post(other.acmeSub);
        const unknown = await post("00000000-0000-4000-8000-000000000000");
        expect(theirs.status).to.equal(404);
        expect(theirs).to.deep.equal(unknown);
        expect(theirs.alert).to.include("not found");
        const funding = await context.request.post(pageUrl(), {
          form: { csrf, subscriptionId: other.acmeSub, fundingAsset: "USDC_ETH", pin: PIN, action: "change-funding-asset" },
          maxRedirects: 0,
        });
        expect(funding.status()).to.equal(404);
        expect(await subscriptionOf(acme, other.acmeSub)).to.include({ status: "ACTIVE", fundingAsset: "USDT_TRON" });
        expect((await eventsOf(sys, other.acmeSub)).map((e) => e.type)).not.to.include("subscription.cancelled");
        // The list never shows the other customer's subscriptions either.
        await page.goto(pageUrl());
        expect(await page.locator(`section[data-subscription-id="${other.acmeSub}"]`).count()).to.equal(0);
      });
    });
  }

  it("a frozen account cannot be chosen and says why; a balance below one charge can, with a warning beside it", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const { user, acmeSub } = await customer();
      await credit(sys, user.id, "BTC", "0.00000001");
      const frozen = await sys.admin.post(`/admin/v1/wallet-users/${user.id}/accounts/freeze`, { asset: "USDC_ETH" });
      expect(frozen.status, frozen.text).to.equal(200);
      const page = await context.newPage();
      await logIn(page, user);
      const form = formOf(page, acmeSub);
      const note = async (asset: string) => {
        const radio = form.locator(`[name=fundingAsset][value=${asset}]`);
        return { disabled: await radio.isDisabled(), note: await page.textContent(`#${(await radio.getAttribute("aria-describedby"))!}`) };
      };
      expect(await note("USDC_ETH")).to.deep.equal({ disabled: true, note: "This account is frozen, so it cannot pay." });
      expect(await note("BTC")).to.deep.equal({ disabled: false, note: "Balance below one charge: add funds before the next charge." });
      expect(await form.locator("[name=fundingAsset][value=USDT_TRON]").getAttribute("aria-describedby")).to.equal(null);
    } finally {
      await context.close();
    }
  });

  it("refuses a form without the CSRF token (403) and a wrong password (401, [role=alert])", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const { user } = await customer();
      const page = await context.newPage();
      await logIn(page, user, "wrong password!");
      expect(await page.textContent("[role=alert]")).to.include("email or password is incorrect");
      const res = await context.request.post(pageUrl(), { form: { action: "login", email: user.email, password: user.password }, maxRedirects: 0 });
      expect(res.status()).to.equal(403);
    } finally {
      await context.close();
    }
  });
});
