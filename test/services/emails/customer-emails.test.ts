import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Client } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { WORKER_GROUP_NAMES } from "../../../services/platform/config.ts";
import { startTestSystem, type TestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createWalletUser, subscriptionsRpc, type WalletUserFixture } from "../../support/subscriptions.ts";
import { eventually } from "../../support/eventually.ts";
import { advanceBy, advanceTo, approvedSubscription, DAY, waitForStatus } from "../../support/billing.ts";
import { settle } from "../../support/sweeps.ts";
import { startSmtpSink, type ReceivedEmail, type SmtpSink } from "../../support/smtp-sink.ts";
import { make } from "../../support/factories/index.ts";

const NAME = `Acme <b>"Streaming"</b> & Co`;
const NAME_IN_HTML = "Acme &lt;b&gt;&quot;Streaming&quot;&lt;/b&gt; &amp; Co";
const FROM = "Billing <billing@wallet.example>";
const patch = (api: ApiClient, body: unknown) => api.request("PATCH", "/api/v1/settings/billing", { body });

/**
 * Customer emails (issue 26) received by a real SMTP server (smtp-server on
 * a free port): upcoming charge, charge at risk, payment failed, receipt, each
 * once, in text and escaped HTML with the merchant's name in the subject; the
 * merchant's settings turn them off; a 5xx refusal is parked and counted, a
 * 4xx retried after a back-off; and a SIGKILLed emails worker sends nothing twice.
 */
describe("customer emails over SMTP", function () {
  this.timeout(90_000);

  describe("the dunning timeline's emails", () => {
    let sink: SmtpSink;
    let sys: TestSystem;
    let rpc: ReturnType<typeof subscriptionsRpc>;
    let client: Client<typeof SubscriptionsService>;

    before(async () => {
      sink = await startSmtpSink();
      sys = await startTestSystem({ env: { SMTP_URL: sink.url, EMAIL_FROM: FROM } });
      rpc = subscriptionsRpc(sys);
      client = rpc.client;
    });
    after(async () => {
      rpc?.close();
      await sys?.close();
      await sink?.close();
    });

    const to = (user: WalletUserFixture) => sink.received.filter((m) => m.to.includes(user.email));
    const mailOf = (user: WalletUserFixture, subject: string) =>
      eventually(async () => to(user).find((m) => m.subject.includes(subject)), 20_000, `email "${subject}" to ${user.email}`);
    const metric = async (kind: string, outcome: string) =>
      (await sys.system.metrics!.emails.get()).values.find((v) => v.labels.kind === kind && v.labels.outcome === outcome)?.value ?? 0;

    it("receipt, upcoming charge, at risk (with the shortfall and the self-service link), payment failed (with the next retry): each once, text and escaped HTML", async () => {
      const m = await sys.createMerchant(NAME);
      expect((await patch(m.api, { chargeNoticeDays: 5, dunningRetryDays: [2, 4] })).status).to.equal(200);
      const user = await createWalletUser(sys, { USDT_TRON: "10" });
      const { subscriptionId } = await approvedSubscription(sys, m.api, client, { plan: { name: "Pro Monthly", amount: "10", interval: "MONTH" }, user });
      const [charge] = (await m.api.get(`/api/v1/subscriptions/${subscriptionId}/charges`)).body.data;

      const receipt = await mailOf(user, "receipt");
      expect(receipt.subject).to.equal(`${NAME}: receipt ${charge.receiptNumber} for Pro Monthly`);
      expect(receipt.from).to.equal("billing@wallet.example");
      expect(receipt.text)
        .to.include(`View your receipt: ${charge.receiptUrl}`)
        .and.include(`${charge.receiptUrl}.pdf`)
        .and.include("Amount paid: 10.00 USD")
        .and.include(NAME);
      expect(receipt.html).to.include(`href="${charge.receiptUrl}"`).and.include(NAME_IN_HTML).and.not.include("<b>");

      const active = (await m.api.get(`/api/v1/subscriptions/${subscriptionId}`)).body;
      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) - 4 * DAY * 1000));
      const upcoming = await mailOf(user, "renews on");
      expect(upcoming.subject).to.equal(`${NAME}: Pro Monthly renews on ${active.nextBillingAt.slice(0, 10)}`);
      expect(upcoming.text).to.include("Amount: 10.00 USD").and.include(`${sys.config.publicBaseUrl}/wallet/subscriptions`);
      const atRisk = await mailOf(user, "may fail");
      expect(atRisk.text).to.include("Short by: 10.00 USDT_TRON").and.include(`${sys.config.publicBaseUrl}/wallet/subscriptions`);
      expect(atRisk.html).to.include("10.00 USDT_TRON").and.include(NAME_IN_HTML).and.include(`href="${sys.config.publicBaseUrl}/wallet/subscriptions"`);

      await advanceTo(sys, new Date(Date.parse(active.nextBillingAt) + 60_000));
      const pastDue = await waitForStatus(m.api, subscriptionId, "PAST_DUE", 20_000);
      const failed = await mailOf(user, "failed");
      expect(failed.subject).to.equal(`${NAME}: payment for Pro Monthly failed`);
      const retry = `${pastDue.nextRetryAt.slice(0, 16).replace("T", " ")} UTC`;
      expect(failed.text).to.include(`We will try again on ${retry}`).and.include(`Next retry: ${retry}`).and.include("your balance was too low");

      // Nothing twice: every sweep has run since, and each email came once.
      await settle(sys);
      const subjects = to(user).map((mail: ReceivedEmail) => mail.subject);
      expect(subjects).to.have.length(4);
      expect(new Set(to(user).map((mail) => mail.messageId)).size).to.equal(4);
      const rows = await sys.sql<{ kind: string; status: string; attempt_count: number }>(
        "select kind, status, attempt_count from customer_emails where merchant_id = ? order by kind",
        [m.id],
      );
      expect(rows).to.deep.equal([
        { kind: "charge_at_risk", status: "SENT", attempt_count: 1 },
        { kind: "payment_failed", status: "SENT", attempt_count: 1 },
        { kind: "receipt", status: "SENT", attempt_count: 1 },
        { kind: "upcoming_charge", status: "SENT", attempt_count: 1 },
      ]);
      expect(await metric("receipt", "sent")).to.be.greaterThan(0);
    });

    it("the merchant's settings choose: with customerEmails off nothing is made, and each is counted as skipped", async () => {
      const m = await sys.createMerchant("Quiet Merchant");
      expect((await patch(m.api, { customerEmails: { upcomingCharge: false, paymentFailed: false, receipt: false } })).status).to.equal(200);
      const skippedBefore = await metric("receipt", "skipped");
      const user = await createWalletUser(sys, { USDT_TRON: "10" });
      await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user });
      await eventually(async () => ((await metric("receipt", "skipped")) > skippedBefore ? true : undefined), 20_000, "receipt skipped");
      await settle(sys);
      expect(await sys.sql("select id from customer_emails where merchant_id = ?", [m.id])).to.deep.equal([]);
      expect(to(user)).to.deep.equal([]);
    });

    it("an event whose customer is gone is collected and counted as skipped; the emails after it still go out", async () => {
      const m = await sys.createMerchant("Gone Customer Merchant");
      const gone = await createWalletUser(sys, { USDT_TRON: "10" });
      const { subscriptionId } = await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user: gone });
      await mailOf(gone, "receipt");
      const skippedBefore = await metric("upcoming_charge", "skipped");
      // The wallet no longer knows this subscription's customer: its lookup is NOT_FOUND.
      await sys.sql("update subscriptions set wallet_user_id = gen_random_uuid() where id = ?", [subscriptionId]);
      const stuck = await make.event(sys, { merchantId: m.id, type: "subscription.charge_upcoming", data: { subscriptionId } });
      const user = await createWalletUser(sys, { USDT_TRON: "10" });
      await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user });
      await mailOf(user, "receipt");
      // Collected: out of the collector's outbox.
      expect(await sys.sql("select 1 from event_outbox where consumer = 'emails' and event_id = ?", [stuck.id])).to.deep.equal([]);
      expect(await metric("upcoming_charge", "skipped")).to.be.greaterThan(skippedBefore);
    });

    it("a 5xx refusal is parked at once and counted; a 4xx is retried after its back-off and then sent once", async () => {
      const m = await sys.createMerchant("Refusals");
      const refused = await createWalletUser(sys, { USDT_TRON: "10" });
      const later = await createWalletUser(sys, { USDT_TRON: "10" });
      let deferred = 0;
      sink.onRecipient = (address) => {
        if (address === refused.email) return [550, "5.1.1 No such mailbox"];
        if (address === later.email && deferred++ === 0) return [451, "4.3.0 Try again later"];
        return undefined;
      };
      const parkedBefore = await metric("receipt", "parked");
      await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user: refused });
      await approvedSubscription(sys, m.api, client, { plan: { amount: "10", interval: "MONTH" }, user: later });
      const rowOf = (user: WalletUserFixture) =>
        sys.sql<{ status: string; attempt_count: number; last_error: string | null }>(
          "select status, attempt_count, last_error from customer_emails where recipient = ?",
          [user.email],
        );
      const parked = await eventually(async () => (await rowOf(refused)).find((r) => r.status === "PARKED"), 20_000, "parked");
      expect(parked.attempt_count).to.equal(1);
      expect(parked.last_error).to.include("550");
      expect(await metric("receipt", "parked")).to.equal(parkedBefore + 1);
      const waiting = await eventually(async () => (await rowOf(later)).find((r) => r.status === "PENDING" && r.attempt_count === 1), 20_000, "deferred");
      expect(waiting.last_error).to.include("451");
      expect(to(later)).to.deep.equal([]);
      // The back-off (30 s) passes on the service clock: the next sweep sends it.
      await advanceBy(sys, 31);
      await eventually(async () => (await rowOf(later)).find((r) => r.status === "SENT" && r.attempt_count === 2), 20_000, "sent on retry");
      expect(to(later)).to.have.length(1);
      expect(to(refused)).to.deep.equal([]);
      sink.onRecipient = () => undefined;
    });
  });

  describe("an emails worker process SIGKILLed while the SMTP server holds its message", () => {
    let sink: SmtpSink;
    let sys: TestSystem;
    let rpc: ReturnType<typeof subscriptionsRpc>;
    const children: ChildProcess[] = [];

    before(async () => {
      sink = await startSmtpSink();
      // Every group but emails runs here: the child processes are the only senders.
      sys = await startTestSystem({ env: { SMTP_URL: sink.url, EMAIL_FROM: FROM }, workerGroups: WORKER_GROUP_NAMES.filter((g) => g !== "emails") });
      rpc = subscriptionsRpc(sys);
    });
    after(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      rpc?.close();
      await sys?.close();
      await sink?.close();
    });

    function emailsWorker(): Promise<ChildProcess> {
      const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/emails-worker.ts", import.meta.url))], {
        env: {
          ...process.env,
          DATABASE_URL: sys.config.databaseUrl,
          REDIS_URL: sys.config.redisUrl,
          QUEUE_PREFIX: sys.config.queuePrefix,
          INTERNAL_API_TOKEN: sys.config.internalApiToken,
          PUBLIC_BASE_URL: sys.config.publicBaseUrl,
          WALLET_SERVICE_URL: sys.config.serviceUrls.wallet,
          CATALOG_SERVICE_URL: sys.config.serviceUrls.catalog,
          MERCHANTS_SERVICE_URL: sys.config.serviceUrls.merchants,
          SUBSCRIPTIONS_SERVICE_URL: sys.config.serviceUrls.subscriptions,
          SMTP_URL: sink.url,
          EMAIL_FROM: FROM,
          SANDBOX: "true",
          SWEEP_INTERVAL_MS: "500",
          METRICS_PORT: "0",
          LOG_LEVEL: "silent",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let stderr = "";
      child.stderr!.on("data", (d) => (stderr += d));
      return new Promise((resolve, reject) => {
        child.stdout!.on("data", (d) => String(d).includes("STARTED") && resolve(child));
        child.once("exit", (code) => reject(new Error(`emails worker exited (${code}): ${stderr}`)));
      });
    }

    it("the held message was never accepted; after the lease the next worker sends each email exactly once", async () => {
      const m = await sys.createMerchant(NAME);
      const users = await Promise.all([createWalletUser(sys, { USDT_TRON: "10" }), createWalletUser(sys, { USDT_TRON: "10" })]);
      let release!: () => void;
      const arrived = new Promise<string>((resolveArrived) => {
        sink.holdData = (raw) => {
          resolveArrived(raw);
          return new Promise<void>((r) => (release = r));
        };
      });
      for (const user of users) await approvedSubscription(sys, m.api, rpc.client, { plan: { amount: "10", interval: "MONTH" }, user });

      const first = await emailsWorker();
      await arrived;
      first.kill("SIGKILL");
      await new Promise((resolve) => (first.exitCode !== null || first.signalCode !== null ? resolve(undefined) : first.once("exit", resolve)));
      sink.holdData = undefined;
      release();
      expect(sink.received).to.deep.equal([]);
      const claimed = await sys.sql<{ status: string }>("select status from customer_emails where merchant_id = ?", [m.id]);
      expect(claimed.map((r) => r.status)).to.include("SENDING");

      // The claim's lease (60 s) runs out on the service clock; a new worker takes over.
      await advanceBy(sys, 61);
      await emailsWorker();
      const rows = await eventually(
        async () => {
          const r = await sys.sql<{ status: string; recipient: string }>("select status, recipient from customer_emails where merchant_id = ?", [m.id]);
          return r.length === 2 && r.every((x) => x.status === "SENT") ? r : undefined;
        },
        30_000,
        "both sent",
      );
      expect(rows.map((r) => r.recipient).sort()).to.deep.equal(users.map((u) => u.email).sort());
      expect(sink.received.map((mail) => mail.to[0]).sort()).to.deep.equal(users.map((u) => u.email).sort());
      expect(new Set(sink.received.map((mail) => mail.messageId)).size).to.equal(2);
    });
  });
});
