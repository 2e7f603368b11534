import { expect } from "chai";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { RpcClients } from "../../../services/platform/rpc/clients.ts";
import { createLogger } from "../../../services/platform/logger.ts";
import { ALL_JOBS } from "../../../workers/registry.ts";
import { payoutJobs } from "../../../services/payouts/jobs.ts";
import { payoutPorts } from "../../../services/payouts/process-ports.ts";
import { sweepPayoutCalls } from "../../../services/payouts/payout-calls.ts";
import { observeChain } from "../../../services/payouts/payout-actions.ts";
import { fakeTxHash, sandboxChain } from "../../../services/payouts/sandbox-chain.ts";
import type { ChainPort, PayoutPorts } from "../../../services/payouts/payout-ports.ts";
import { backoffSeconds, MAX_CALL_FAILURES } from "../../../services/platform/wallet-calls/wallet-call.ts";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { eventually } from "../../support/eventually.ts";
import { createOrder } from "../orders/orders-client.ts";

const TRON_ADDRESS = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";

/**
 * Exactly once for payouts: a payouts worker SIGKILLed right after the wallet
 * debit or right after the chain call, a crash between steps, and a chain
 * call that keeps failing. The payout jobs do not run in the test system: the
 * sweep's own functions (what `payouts.sweep` runs) are called by the test,
 * so nothing but the dead process and the sweep ever touches these payouts.
 */
describe("payouts: exactly once through crashes (the payouts sweep finishes what a crash left)", () => {
  let rpc: RpcClients;
  let ports: PayoutPorts;
  let deposits = 0;

  const sys = useTestSystem({ env: { PAYOUT_DESTINATION_COOLDOWN_MINUTES: "0" }, jobs: ALL_JOBS.filter((h) => !payoutJobs.includes(h as never)) });
  before(async () => {
    rpc = new RpcClients(sys.config.internalApiToken);
    ports = payoutPorts({ rpc, config: sys.config, logger: createLogger("silent") });
  });
  after(async () => {
    rpc?.close();
  });

  /** What `payouts.sweep` runs (services/payouts/jobs.ts), once. */
  const sweep = async (with_: PayoutPorts = ports) => {
    const calls = await sweepPayoutCalls(sys.context(), with_);
    const chain = await observeChain(sys.context(), with_);
    return { settled: calls.settled, failed: calls.failed, paid: chain.paid };
  };

  async function balances(api: ApiClient): Promise<{ available: Record<string, string>; pending: Record<string, string> }> {
    const res = await api.get("/api/v1/balance");
    expect(res.status, res.text).to.equal(200);
    const map = (list: { asset: string; amount: string }[]) => Object.fromEntries(list.map((b) => [b.asset, b.amount]));
    return { available: map(res.body.available), pending: map(res.body.pending) };
  }

  /** A merchant with `amount` USDT_TRON available (a paid order) and an ACTIVE destination. */
  async function fundedShop(amount: string) {
    const shop = await sys.createMerchant(`Payout crash shop ${++deposits}`);
    const order = await createOrder(shop.api, { asset: "USDT_TRON", amount, currency: "USD" });
    const paid = await sys.admin.post("/admin/v1/deposits", {
      address: order.address,
      asset: "USDT_TRON",
      amount,
      txId: `payout-crash-${process.pid}-${deposits}`,
      confirmations: 19,
    });
    expect(paid.status, paid.text).to.be.oneOf([200, 201]);
    await eventually(async () => ((await balances(shop.api)).available.USDT_TRON === amount ? true : undefined), 15_000, "the order's credit");
    const dest = await shop.api.post("/api/v1/payout-destinations", { asset: "USDT_TRON", address: TRON_ADDRESS });
    expect(dest.body.status, dest.text).to.equal("ACTIVE");
    return { ...shop, destinationId: dest.body.id as string };
  }

  /** Runs the dying payouts worker until it has made its external call, then SIGKILLs it; returns what it printed. */
  async function killedAfter(mode: "debit" | "submit", merchantId: string, destinationId: string, amount: string): Promise<string> {
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL("./fixtures/payout-then-hang.ts", import.meta.url)), merchantId, destinationId, amount, mode],
      {
        env: {
          ...process.env,
          DATABASE_URL: sys.config.databaseUrl,
          REDIS_URL: sys.config.redisUrl,
          QUEUE_PREFIX: sys.config.queuePrefix,
          INTERNAL_API_TOKEN: sys.config.internalApiToken,
          WALLET_SERVICE_URL: sys.config.serviceUrls.wallet,
          MERCHANTS_SERVICE_URL: sys.config.serviceUrls.merchants,
          ORDERS_SERVICE_URL: sys.config.serviceUrls.orders,
          SANDBOX: "true",
          LOG_LEVEL: "silent",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const marker = mode === "debit" ? /DEBITED (\S+)/ : /SUBMITTED (\S+)/;
    const printed = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = marker.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on("exit", (code) => reject(new Error(`child exited (${code}) before its ${mode}: ${out} ${stderr}`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    return printed;
  }

  /** The payout's calls, its sandbox-chain rows and its ledger transactions. */
  async function trail(payoutId: string) {
    const calls = await sys.sql("select kind, status, tx_hash from payout_calls where payout_id = ? order by kind", [payoutId]);
    const chain = await sys.sql("select tx_hash, submissions from payout_sandbox_chain where payout_id = ?", [payoutId]);
    const ledger = await sys.sql("select kind, amount::text as amount from ledger_transactions where idempotency_key like ?", [`%${payoutId}`]);
    const [payout] = await sys.sql("select status, tx_hash from payouts where id = ?", [payoutId]);
    return { calls, chain, ledger, payout };
  }

  async function booksClean() {
    const ledger = await sys.admin.get("/admin/v1/ledger/check");
    expect(ledger.body.ok, ledger.text).to.equal(true);
    const rec = await sys.admin.get("/admin/v1/reconciliation");
    expect(rec.body.status, rec.text).to.equal("ok");
  }

  /** Past the sandbox chain's 19 × 3 s: the next chain check finds the payout confirmed. */
  const confirm = async (payoutId: string) => {
    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 });
    await sweep();
    expect((await trail(payoutId)).payout.status).to.equal("PAID");
  };

  it("a payouts worker SIGKILLed after the wallet debit, before the settle: the sweep settles the DEBIT with the same key (no second debit), then hands the payout to the chain once", async () => {
    const shop = await fundedShop("50");
    const key = await killedAfter("debit", shop.id, shop.destinationId, "20");
    expect(key).to.match(/^payout-debit-/);
    const payoutId = key.replace("payout-debit-", "");
    // Debited, not settled: the money left, the row is still OPENING (never shown) with its DEBIT call PENDING and leased.
    expect((await balances(shop.api)).available.USDT_TRON).to.equal("29");
    let t = await trail(payoutId);
    expect(t.payout.status).to.equal("OPENING");
    expect(t.calls).to.deep.equal([{ kind: "DEBIT", status: "PENDING", tx_hash: null }]);
    expect(t.ledger.map((l: any) => [l.kind, Number(l.amount)])).to.deep.equal([["PAYOUT", 21]]);
    // While the dead worker's lease (30 s) runs, the sweep leaves the row alone.
    expect((await sweep()).settled).to.equal(0);
    expect((await trail(payoutId)).calls[0].status).to.equal("PENDING");
    // Time passes: the lease runs out.
    await sys.sql("update payout_calls set lease_until = now() - interval '1 second' where payout_id = ?", [payoutId]);

    expect((await sweep()).settled).to.equal(1); // DEBIT settled: PENDING, SUBMIT opened
    expect((await trail(payoutId)).payout.status).to.equal("PENDING");
    expect((await sweep()).settled).to.equal(1); // SUBMIT: handed to the chain
    t = await trail(payoutId);
    expect(t.payout).to.deep.equal({ status: "PROCESSING", tx_hash: fakeTxHash("TRON", payoutId) });
    expect(t.calls.map((c: any) => [c.kind, c.status])).to.deep.equal([
      ["DEBIT", "DONE"],
      ["SUBMIT", "DONE"],
    ]);
    expect(t.chain).to.deep.equal([{ tx_hash: fakeTxHash("TRON", payoutId), submissions: 1 }]);
    expect(t.ledger).to.have.length(1);
    expect(await balances(shop.api)).to.deep.equal({ available: { USDT_TRON: "29" }, pending: { USDT_TRON: "21" } });

    await confirm(payoutId);
    expect((await trail(payoutId)).ledger).to.have.length(1);
    expect(await balances(shop.api)).to.deep.equal({ available: { USDT_TRON: "29" }, pending: {} });
    const events = await sys.sql("select type from events where data->>'id' = ? order by seq", [payoutId]);
    expect(events.map((e: any) => e.type)).to.deep.equal(["payout.created", "payout.processing", "payout.paid"]);
    await booksClean();
  });

  it("a payouts worker SIGKILLed after the chain call, before the settle: the sweep asks the chain again with the payout id and gets the same transfer (one sandbox-chain row, one PAYOUT transaction)", async () => {
    const shop = await fundedShop("40");
    const payoutId = await killedAfter("submit", shop.id, shop.destinationId, "10");
    let t = await trail(payoutId);
    expect(t.payout.status).to.equal("PENDING");
    expect(t.calls.map((c: any) => [c.kind, c.status])).to.deep.equal([
      ["DEBIT", "DONE"],
      ["SUBMIT", "PENDING"],
    ]);
    expect(t.chain).to.deep.equal([{ tx_hash: fakeTxHash("TRON", payoutId), submissions: 1 }]);
    expect((await sweep()).settled).to.equal(0); // the dead worker's lease still runs
    await sys.sql("update payout_calls set lease_until = now() - interval '1 second' where payout_id = ? and kind = 'SUBMIT'", [payoutId]);

    expect((await sweep()).settled).to.equal(1);
    t = await trail(payoutId);
    expect(t.payout).to.deep.equal({ status: "PROCESSING", tx_hash: fakeTxHash("TRON", payoutId) });
    // The retry carried the same key: the chain counted a second submission of the one transfer, sent nothing new.
    expect(t.chain).to.deep.equal([{ tx_hash: fakeTxHash("TRON", payoutId), submissions: 2 }]);
    expect(t.ledger.map((l: any) => l.kind)).to.deep.equal(["PAYOUT"]);
    expect(Number(t.ledger[0].amount)).to.equal(11); // amount + fee, as the ledger records it
    await confirm(payoutId);
    expect(await balances(shop.api)).to.deep.equal({ available: { USDT_TRON: "29" }, pending: {} });
    const events = await sys.sql("select type from events where data->>'id' = ? order by seq", [payoutId]);
    expect(events.map((e: any) => e.type)).to.deep.equal(["payout.created", "payout.processing", "payout.paid"]);
    await booksClean();
  });

  it("a crash between steps (the SUBMIT call leased by a process that died before calling): the sweep waits out the lease, then finishes it with the same key", async () => {
    const shop = await fundedShop("30");
    const res = await shop.api.post("/api/v1/payouts", { destinationId: shop.destinationId, amount: "8" });
    expect(res.status, res.text).to.equal(201);
    const payoutId = res.body.id as string;
    // No payouts job runs here: what a lost job leaves is the SUBMIT call PENDING. A worker takes its lease and dies.
    const [leased] = await sys.sql(
      "update payout_calls set lease_until = now() + interval '30 seconds', lease_generation = lease_generation + 1 where payout_id = ? and kind = 'SUBMIT' and status = 'PENDING' returning lease_generation",
      [payoutId],
    );
    expect(leased.lease_generation).to.equal(1);
    expect((await sweep()).settled).to.equal(0);
    expect((await trail(payoutId)).chain).to.deep.equal([]);
    await sys.sql("update payout_calls set lease_until = now() - interval '1 second' where payout_id = ? and kind = 'SUBMIT'", [payoutId]);
    expect((await sweep()).settled).to.equal(1);
    const t = await trail(payoutId);
    expect(t.payout).to.deep.equal({ status: "PROCESSING", tx_hash: fakeTxHash("TRON", payoutId) });
    expect(t.chain).to.deep.equal([{ tx_hash: fakeTxHash("TRON", payoutId), submissions: 1 }]);
    const [call] = await sys.sql("select lease_generation, settle_failures from payout_calls where payout_id = ? and kind = 'SUBMIT'", [payoutId]);
    expect(call).to.deep.equal({ lease_generation: 2, settle_failures: 0 });
    await confirm(payoutId);
    expect(await balances(shop.api)).to.deep.equal({ available: { USDT_TRON: "21" }, pending: {} });
    await booksClean();
  });

  it("a chain call that keeps failing: failures counted with back-off (5 s doubling), parked after 10, left alone by the sweep, reported as PARKED_ROW; finished once an operator unparks it", async () => {
    const shop = await fundedShop("25");
    const res = await shop.api.post("/api/v1/payouts", { destinationId: shop.destinationId, amount: "12" });
    expect(res.status, res.text).to.equal(201);
    const payoutId = res.body.id as string;
    const [{ id: callId }] = await sys.sql("select id from payout_calls where payout_id = ? and kind = 'SUBMIT'", [payoutId]);
    let attempts = 0;
    const real = sandboxChain();
    const broken: ChainPort = {
      name: "sandbox",
      status: real.status,
      async submit() {
        attempts += 1;
        throw new Error("signer unreachable");
      },
    };
    const failing = { ...ports, chain: broken };
    const row = async () =>
      (
        await sys.sql(
          `select status, settle_failures, parked_at is not null as parked, last_error, lease_until,
                  round(extract(epoch from next_settle_at - now()))::int as wait from payout_calls where id = ?`,
          [callId],
        )
      )[0];

    for (let n = 1; n <= MAX_CALL_FAILURES; n++) {
      expect((await sweep(failing)).failed).to.equal(1);
      const r = await row();
      expect(r, `failure ${n}`).to.include({
        status: "PENDING",
        settle_failures: n,
        parked: n === MAX_CALL_FAILURES,
        last_error: "signer unreachable",
        lease_until: null,
      });
      expect(r.wait, `back-off after failure ${n}`).to.be.within(backoffSeconds(n) - 2, backoffSeconds(n));
      expect(attempts).to.equal(n);
      if (n < MAX_CALL_FAILURES) {
        // Not due yet: the sweep does not call it again.
        await sweep(failing);
        expect(attempts).to.equal(n);
        // Time passes: its back-off runs out.
        await sys.sql("update payout_calls set next_settle_at = now() - interval '1 second' where id = ?", [callId]);
      }
    }
    // Parked: even when due, no sweep takes it again.
    await sys.sql("update payout_calls set next_settle_at = now() - interval '1 second' where id = ?", [callId]);
    await sweep(failing);
    expect(attempts).to.equal(MAX_CALL_FAILURES);
    expect((await trail(payoutId)).payout.status).to.equal("PENDING");
    expect((await trail(payoutId)).chain).to.deep.equal([]);
    const rec = await sys.admin.get("/admin/v1/reconciliation");
    expect(rec.body.status, rec.text).to.not.equal("ok");
    expect(rec.body.anomalies.map((a: any) => [a.kind, a.ownerType, a.ownerId])).to.deep.equal([["PARKED_ROW", "payout_call", callId]]);
    expect((await balances(shop.api)).available.USDT_TRON).to.equal("12");

    // An operator fixes the signer and unparks the row: the next sweep hands the payout over once.
    await sys.sql("update payout_calls set parked_at = null, settle_failures = 0, next_settle_at = null where id = ?", [callId]);
    expect((await sweep()).settled).to.equal(1);
    expect((await trail(payoutId)).chain).to.deep.equal([{ tx_hash: fakeTxHash("TRON", payoutId), submissions: 1 }]);
    await confirm(payoutId);
    expect(await balances(shop.api)).to.deep.equal({ available: { USDT_TRON: "12" }, pending: {} });
    await booksClean();
  });
  it("a chain check that throws for one payout: the sweep still checks the others (PAID), and the failing one is asked again later instead of blocking the queue", async () => {
    const shop = await fundedShop("40");
    const ids: string[] = [];
    for (const amount of ["10", "11"]) {
      const res = await shop.api.post("/api/v1/payouts", { destinationId: shop.destinationId, amount });
      expect(res.status, res.text).to.equal(201);
      ids.push(res.body.id as string);
    }
    const [bad, good] = ids as [string, string];
    expect((await sweep()).settled).to.equal(2); // both SUBMITs: handed to the chain
    const real = sandboxChain();
    const flaky: ChainPort = {
      ...real,
      async status(ctx, transfer) {
        if (transfer.payoutId === bad) throw new Error("malformed chain answer");
        return real.status(ctx, transfer);
      },
    };
    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 });
    expect((await sweep({ ...ports, chain: flaky })).paid).to.equal(1);
    expect((await trail(good)).payout.status).to.equal("PAID");
    const [row] = await sys.sql("select status, next_chain_check_at > now() as deferred from payouts where id = ?", [bad]);
    expect(row).to.deep.equal({ status: "PROCESSING", deferred: true });
    // Once the chain answers again, it finishes too.
    await sys.admin.post("/admin/v1/sandbox/clock/advance", { seconds: 60 });
    await sys.sql("update payouts set next_chain_check_at = now() - interval '1 second' where id = ?", [bad]);
    await confirm(bad);
    await booksClean();
  });
});
