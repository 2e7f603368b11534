import { expect } from "chai";
import { extractText, getDocumentProxy } from "unpdf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { ApprovalOutcome, type SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { recordAnswer } from "../../support/answers-seen.ts";
import { createPlan, createSubscription, createWalletUser, eventsOf, subscriptionsRpc, tokenOf } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";

/** Receipts (issue 25): numbers gap-free per merchant in commit order, the receipt URL, GET /charges/{id}, the PDF. */
describe("pricing: receipts", () => {
  let rpc: ReturnType<typeof subscriptionsRpc>;
  let client: Client<typeof SubscriptionsService>;

  const sys = useTestSystem();
  before(async () => {
    rpc = subscriptionsRpc(sys);
    client = rpc.client;
  });
  after(async () => {
    rpc?.close();
  });

  /** As the hosted page's customer does: a retryable answer (503, a payment in flight) is tried again with the same link. */
  async function approve(subscription: { authorizationUrl: string }, userId: string) {
    const request = { token: tokenOf(subscription.authorizationUrl), walletUserId: userId, fundingAsset: "USDT_TRON" };
    let res;
    for (let tries = 0; ; tries += 1) {
      try {
        res = await client.approveAuthorization(request);
        break;
      } catch (err) {
        const retryable = err instanceof ConnectError && (err.code === Code.Unavailable || err.message.includes("being processed"));
        if (!retryable || tries >= 20) throw err;
      }
    }
    if (res.outcome !== ApprovalOutcome.APPROVED) throw new Error(`approval refused: ${res.message}`);
    return res;
  }

  /**
   * approve, for many at once on a loaded machine: a try that timed out (503) may still have gone through,
   * its charge finished by the stale-charge sweep; the retry then hears "already been used". The caller waits for the charges.
   */
  async function approveOrFinished(subscription: { authorizationUrl: string }, userId: string): Promise<void> {
    try {
      await approve(subscription, userId);
    } catch (err) {
      if (!(err instanceof ConnectError && err.message.includes("already been used"))) throw err;
    }
  }

  async function fetchPdf(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${sys.baseUrl}${path}`, { headers });
    recordAnswer("GET", `${sys.baseUrl}${path}`, res.status);
    return { status: res.status, type: res.headers.get("content-type"), headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
  }

  async function pdfText(bytes: Uint8Array): Promise<string> {
    const { text } = await extractText(await getDocumentProxy(bytes), { mergePages: true });
    return text;
  }

  it("50 parallel first payments of one merchant: receipt numbers 1…50 with its prefix, no gap, no duplicate; the prefix is locked afterwards", async () => {
    const merchant = await sys.createMerchant("Numbered");
    const api = merchant.api;
    const set = await sys.admin.request("PATCH", `/admin/v1/merchants/${merchant.id}`, { body: { receiptPrefix: "ACME" } });
    expect(set.status).to.equal(200);
    expect(set.body.receiptPrefix).to.equal("ACME");
    expect((await sys.admin.request("PATCH", `/admin/v1/merchants/${merchant.id}`, { body: { receiptPrefix: "acme" } })).status).to.equal(400);

    const plan = await createPlan(api, { amount: "3.25", currency: "USD" });
    const users = await Promise.all(Array.from({ length: 5 }, () => createWalletUser(sys, { USDT_TRON: "100" })));
    const subs = [];
    for (let k = 0; k < 50; k += 1) subs.push({ s: await createSubscription(api, plan.id, users[k % 5]!.id), user: users[k % 5]! });
    await Promise.all(subs.map(({ s, user }) => approveOrFinished(s, user.id)));
    await eventually(
      async () => {
        const [row] = await sys.sql<{ n: number }>("select count(*)::int as n from subscription_charges where merchant_id = ? and status = 'SUCCEEDED'", [
          merchant.id,
        ]);
        return row!.n === 50 ? true : undefined;
      },
      60_000,
      "every first payment settled",
    );

    const rows = await sys.sql<{ receipt_number: string; receipt_url: string; settled_at: Date }>(
      "select receipt_number, receipt_url, settled_at from subscription_charges where merchant_id = ? and status = 'SUCCEEDED' order by receipt_number",
      [merchant.id],
    );
    expect(rows.map((r) => r.receipt_number)).to.deep.equal(Array.from({ length: 50 }, (_, k) => `ACME-${String(k + 1).padStart(6, "0")}`));
    expect(new Set(rows.map((r) => r.receipt_url)).size).to.equal(50);
    const locked = await sys.admin.request("PATCH", `/admin/v1/merchants/${merchant.id}`, { body: { receiptPrefix: "OTHER" } });
    expect(locked.status).to.equal(409);
    expect(locked.body.error).to.equal("RECEIPT_PREFIX_LOCKED");
    // The same prefix again changes nothing: 200.
    expect((await sys.admin.request("PATCH", `/admin/v1/merchants/${merchant.id}`, { body: { receiptPrefix: "ACME" } })).status).to.equal(200);
  });

  it("a charge carries receiptNumber and receiptUrl (also in subscription.charge_succeeded); GET /charges/{id}; another merchant's is 404", async () => {
    const merchant = await sys.createMerchant("Default prefix");
    const plan = await createPlan(merchant.api, { amount: "7", currency: "USD" });
    const user = await createWalletUser(sys, { USDT_TRON: "10" });
    const s = await createSubscription(merchant.api, plan.id, user.id);
    const approved = await approve(s, user.id);
    const chargeId = approved.charge!.id;
    const charge = (await merchant.api.get(`/api/v1/charges/${chargeId}`)).body;
    const prefix = `R${merchant.id.replace(/-/g, "").slice(0, 8).toUpperCase()}`;
    expect(charge).to.include({ id: chargeId, receiptNumber: `${prefix}-000001`, amount: "7", subtotal: "7", discountAmount: "0" });
    expect(charge.receiptUrl).to.match(/\/receipts\/[A-Za-z0-9_-]{32}$/);
    expect(charge.rateAt).to.be.a("string");
    const event = (await eventsOf(sys, s.subscriptionId)).find((e) => e.type === "subscription.charge_succeeded")!;
    expect(event.data.charge).to.include({ receiptNumber: charge.receiptNumber, receiptUrl: charge.receiptUrl });
    const other = await sys.createMerchant("Other");
    const hidden = await other.api.get(`/api/v1/charges/${chargeId}`);
    expect(hidden.status).to.equal(404);
    expect(hidden.body.error).to.equal("CHARGE_NOT_FOUND");
    expect((await other.api.get(`/api/v1/charges/not-a-uuid`)).body.error).to.equal("CHARGE_NOT_FOUND");
    expect((await fetchPdf(`/api/v1/charges/${chargeId}/receipt.pdf`, { "X-API-KEY": other.apiKey })).status).to.equal(404);
  });

  it("the PDF (API key and the customer's {receiptUrl}.pdf) holds the number, the amounts, the rate and a Cyrillic merchant name", async () => {
    const merchant = await sys.createMerchant("ООО «Ромашка»");
    const plan = await createPlan(merchant.api, { name: "Премиум", amount: "19.90", currency: "USD" });
    const coupon = (await merchant.api.post("/api/v1/coupons", { name: "Скидка", percentOff: "10", duration: "ONCE" })).body;
    const user = await createWalletUser(sys, { USDT_TRON: "50" });
    const s = await createSubscription(merchant.api, plan.id, user.id, { couponId: coupon.id });
    const approved = await approve(s, user.id);
    const charge = (await merchant.api.get(`/api/v1/charges/${approved.charge!.id}`)).body;
    expect(charge).to.include({ subtotal: "19.9", discountAmount: "1.99", amount: "17.91" });

    const byKey = await fetchPdf(`/api/v1/charges/${charge.id}/receipt.pdf`, { "X-API-KEY": merchant.apiKey });
    expect(byKey.status).to.equal(200);
    expect(byKey.type).to.equal("application/pdf");
    expect(Buffer.from(byKey.bytes.subarray(0, 5)).toString()).to.equal("%PDF-");
    const text = await pdfText(byKey.bytes);
    for (const part of ["ООО «Ромашка»", "Премиум", charge.receiptNumber, "19.9 USD", "1.99 USD", "17.91 USD", "17.91 USDT_TRON", charge.walletTransactionId]) {
      expect(text, part).to.include(part);
    }

    const customer = await fetchPdf(`${new URL(charge.receiptUrl).pathname}.pdf`);
    expect(customer.status).to.equal(200);
    expect(customer.headers.get("x-robots-tag")).to.equal("noindex");
    expect(await pdfText(customer.bytes)).to.include(charge.receiptNumber);
    expect((await fetchPdf("/receipts/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.pdf")).status).to.equal(404);

    // A refund appears on the receipt with its date.
    const refund = await merchant.api.post("/api/v1/refunds", { chargeId: charge.id, amount: "5" });
    expect(refund.status, refund.text).to.equal(201);
    const after = await pdfText((await fetchPdf(`/api/v1/charges/${charge.id}/receipt.pdf`, { "X-API-KEY": merchant.apiKey })).bytes);
    expect(after).to.include("Refunds");
    expect(after).to.include("5 USD");
  });
});
