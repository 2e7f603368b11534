import { expect } from "chai";
import { chromium, type Browser } from "playwright-core";
import { useTestSystem } from "../support/system.ts";
import type { ApiClient } from "../support/http.ts";
import { CHROMIUM_ARGS, overflowingElements, seriousA11yViolations, VIEWPORTS } from "../support/browser.ts";
import { eventually } from "../support/eventually.ts";
import { available, paidOrder } from "../support/order-refunds.ts";
import { createOrder } from "../services/orders/orders-client.ts";

const TRON_ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
/** A taproot address (62 characters, the longest kind the page shows): it must wrap at 390 px, not push the page wider. */
const TAPROOT_ADDRESS = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0";
const TAPROOT_BAD_CHECKSUM = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd";

/**
 * The refund claim page in a real headless Chromium with JavaScript off,
 * driven through its contract: input[name=address], button[name=action][value=claim],
 * [role=alert] for a wrong address, [role=status] once claimed.
 */
describe("refund claim page (headless Chromium)", function () {
  this.timeout(60_000);
  let api: ApiClient;
  let browser: Browser;

  const sys = useTestSystem();
  before(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS, headless: true });
    api = (await sys.createMerchant("Acme <Store>")).api;
  });
  after(async () => {
    await browser?.close();
  });

  async function claim() {
    const order = await paidOrder(sys, api, "25");
    const res = await api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "10" });
    expect(res.status, res.text).to.equal(201);
    return { order, refund: res.body, url: new URL(new URL(res.body.claimUrl).pathname, sys.baseUrl).toString() };
  }

  let btcDeposits = 0;
  /** A claim link of a refund of a paid BTC order, so the customer gives a long (taproot) address. */
  async function btcClaim() {
    const order = await createOrder(api, { asset: "BTC", amount: "0.01", currency: "BTC" });
    const paid = await sys.admin.post("/admin/v1/deposits", {
      address: order.address,
      asset: "BTC",
      amount: "0.01",
      txId: `claim-page-btc-${process.pid}-${++btcDeposits}`,
      confirmations: 2,
    });
    expect(paid.status, paid.text).to.be.oneOf([200, 201]);
    // Settled, not only PAID: the merchant's credit follows the payment in a wallet call of its own, and the refund
    // is paid from that balance.
    await eventually(
      async () => {
        const body = (await api.get(`/api/v1/payment-orders/${order.id}`)).body;
        return body.status === "PAID" && body.settledAt ? true : undefined;
      },
      15_000,
      "the BTC order paid and credited",
    );
    const res = await api.post(`/api/v1/payment-orders/${order.id}/refunds`, { amount: "0.005" });
    expect(res.status, res.text).to.equal(201);
    return { order, refund: res.body, url: new URL(new URL(res.body.claimUrl).pathname, sys.baseUrl).toString() };
  }

  for (const { name, viewport, isMobile } of VIEWPORTS) {
    // At phone width the order is in BTC: its taproot address is the longest one the done page shows.
    const phone = viewport.width < 500;
    const [good, bad] = phone ? [TAPROOT_ADDRESS, TAPROOT_BAD_CHECKSUM] : [TRON_ADDRESS, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"];
    it(`at ${name}: a wrong address shows [role=alert] naming the rule; the right one shows [role=status] and the payout starts; axe clean, nothing wider than the screen`, async () => {
      const { order, refund, url } = phone ? await btcClaim() : await claim();
      const context = await browser.newContext({ javaScriptEnabled: false, viewport, isMobile });
      try {
        const page = await context.newPage();
        const check = async (step: string) => {
          expect(await seriousA11yViolations(page), step).to.deep.equal([]);
          expect(await overflowingElements(page), step).to.deep.equal([]);
        };
        const first = await page.goto(url);
        expect(first!.status()).to.equal(200);
        expect(first!.headers()["content-security-policy"]).to.contain("default-src 'none'");
        expect(first!.headers()["cache-control"]).to.equal("no-store");
        expect(first!.headers()["x-frame-options"]).to.equal("DENY");
        expect(await page.textContent("body")).to.contain("Acme <Store>");
        await check("form");

        await page.fill("input[name=address]", bad);
        await page.click("button[name=action][value=claim]");
        expect(await page.textContent("[role=alert]")).to.match(/checksum/);
        expect(await page.inputValue("input[name=address]")).to.equal(bad);
        await check("wrong address");

        await page.fill("input[name=address]", good);
        await page.click("button[name=action][value=claim]");
        expect(await page.textContent("[role=status]")).to.contain("on its way");
        expect(await page.textContent(".note")).to.contain(good);
        await check("claimed");

        const listed = (await api.get(`/api/v1/payment-orders/${order.id}/refunds`)).body.data.find((r: any) => r.id === refund.id);
        expect(listed).to.include({ status: "PROCESSING", address: good, claimUrl: null });
        await eventually(
          async () => ((await api.get(`/api/v1/payouts/${listed.payoutId}`)).body.status === "PROCESSING" ? true : undefined),
          15_000,
          "the payout on the chain",
        );
        // the link now only tells where the refund is; posting again changes nothing
        const again = await page.goto(url);
        expect(again!.status()).to.equal(200);
        expect(await page.locator("input[name=address]").count()).to.equal(0);
        await check("claimed, visited again");

        await page.goto(`${sys.baseUrl}/claims/${"A".repeat(43)}`);
        expect(await page.textContent("h1")).to.contain("Link not found");
        await check("unknown link");
      } finally {
        await context.close();
      }
    });
  }

  it("refuses a form without its CSRF token (403) and moves nothing", async () => {
    const { url } = await claim();
    const before = await available(api);
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `address=${TRON_ADDRESS}&action=claim`,
    });
    expect(res.status).to.equal(403);
    expect(await available(api)).to.equal(before);
  });
});
