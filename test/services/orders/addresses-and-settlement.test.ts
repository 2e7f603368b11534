import { expect } from "chai";
import { useTestSystem } from "../../support/system.ts";
import type { ApiClient } from "../../support/http.ts";
import { createDepositAddresses } from "../../../services/orders/addresses/deposit-addresses.ts";
import { TEST_DEPOSIT_XPUBS } from "../../../services/platform/config.ts";
import { settleCredit, settlePendingCredits } from "../../../services/orders/settle-credit.ts";
import { ledgerKeys } from "../../../services/wallet/contract.ts";
import { walletPort } from "../../../services/orders/wallet-port.ts";
import { createOrder, externalId, merchantBalance, orderClients } from "./orders-client.ts";

describe("deposit addresses under concurrency", () => {
  let api: ApiClient;

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    api = (await sys.createMerchant("Busy shop")).api;
  });

  it("hands out 200 distinct addresses to 200 concurrent creates, each the configured key's child at its index", async function () {
    this.timeout(60_000);
    // ETH and USDC_ETH share the Ethereum key: the hardest case for index allocation.
    const assets = ["ETH", "USDC_ETH", "USDT_TRON", "BTC"];
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api.post("/api/v1/payment-orders", { externalId: externalId("conc"), externalCustomerId: "c", asset: assets[i % 4], amount: "1" }),
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(200).fill(201));
    expect(new Set(results.map((r) => r.body.address)).size).to.equal(200);

    const rows = await sys.sql<{ address: string; network: string; derivation_key: string; derivation_index: number }>(
      "select address, network, derivation_key, derivation_index from payment_orders where id in (?)",
      [results.map((r) => r.body.id)],
    );
    const addresses = createDepositAddresses(TEST_DEPOSIT_XPUBS);
    for (const row of rows) {
      const source = addresses.forNetwork(row.network)!;
      expect(row.derivation_key).to.equal(source.keyId);
      expect(row.address).to.equal(source.address(row.derivation_index));
    }
    const ethereum = rows
      .filter((r) => r.network === "ETHEREUM")
      .map((r) => r.derivation_index)
      .sort((a, b) => a - b);
    expect(ethereum).to.have.length(100);
    expect(new Set(ethereum).size).to.equal(100);
  });

  it("schedules each order's expiry as a delayed job with a deterministic id", async () => {
    const order = await createOrder(api, { expiresInMinutes: 30 });
    const job = await sys.system.queues!.queue("payments").getJob(`payment-order-expire-${order.id}`);
    expect(job, "delayed job").to.not.equal(undefined);
    expect(job!.name).to.equal("payment-orders.expire");
    expect(job!.data).to.deep.equal({ orderId: order.id });
    expect(job!.opts.delay).to.be.closeTo(30 * 60_000, 10_000);
  });
});

describe("merchant credits are exactly once (crash recovery)", () => {
  let clients: ReturnType<typeof orderClients>;
  let merchant: { id: string; api: ApiClient };

  // No workers: nothing carries the credits but the calls below, as after a crash.
  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    clients = orderClients(sys);
    merchant = await sys.createMerchant("Recovering shop");
  });
  after(async () => {
    clients?.close();
  });

  const paidOrder = async (amount: string) => {
    const order = await createOrder(merchant.api, { asset: "USDT_TRON", amount });
    await clients.orders.reportDeposit({ address: order.address, asset: "USDT_TRON", amount, txId: `tx-${order.id}`, confirmations: 19 });
    return order;
  };
  const creditOf = async (orderId: string) =>
    (
      await sys.sql<{ id: string; status: string; amount: string }>("select id, status, amount::text from payment_order_credits where order_id = ?", [orderId])
    )[0]!;

  it("leaves a PAID order's credit PENDING in the same commit, and the sweep settles it with the order's key", async () => {
    const before = await merchantBalance(clients.wallet, merchant.id, "USDT_TRON");
    const order = await paidOrder("7");
    const credit = await creditOf(order.id);
    expect(credit.status).to.equal("PENDING");
    expect(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON")).to.equal(before);
    const wallet = walletPort({ rpc: clients.rpc, config: sys.config });
    const res = await settlePendingCredits(sys.context(), wallet);
    expect(res.credited).to.be.at.least(1);
    expect((await creditOf(order.id)).status).to.equal("DONE");
    expect(Number(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON"))).to.equal(Number(before) + 7);
    expect((await merchant.api.get(`/api/v1/payment-orders/${order.id}`)).body.settledAt).to.be.a("string");
  });

  it("credits once when the process died after the wallet call but before recording it", async () => {
    const wallet = walletPort({ rpc: clients.rpc, config: sys.config });
    await settlePendingCredits(sys.context(), wallet);
    const before = Number(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON"));
    const order = await paidOrder("3");
    // The wallet call of the run that "crashed": same key, same amount.
    await clients.wallet.creditMerchant({ idempotencyKey: ledgerKeys.orderCredit(order.id), merchantId: merchant.id, asset: "USDT_TRON", amount: "3" });
    expect(Number(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON"))).to.equal(before + 3);
    // Recovery: the sweep retries with the same key; the wallet replays and nothing moves twice.
    await settlePendingCredits(sys.context(), wallet);
    await settlePendingCredits(sys.context(), wallet);
    expect((await creditOf(order.id)).status).to.equal("DONE");
    expect(Number(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON"))).to.equal(before + 3);
  });

  it("credits once when the job and the sweep settle the same credit at the same time", async () => {
    const wallet = walletPort({ rpc: clients.rpc, config: sys.config });
    await settlePendingCredits(sys.context(), wallet);
    const before = Number(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON"));
    const order = await paidOrder("2.5");
    const { id } = await creditOf(order.id);
    await Promise.all([settleCredit(sys.context(), wallet, id), settleCredit(sys.context(), wallet, id), settlePendingCredits(sys.context(), wallet)]);
    expect((await creditOf(order.id)).status).to.equal("DONE");
    expect(Number(await merchantBalance(clients.wallet, merchant.id, "USDT_TRON"))).to.equal(before + 2.5);
    const ledger = await clients.wallet.checkLedger({});
    expect(ledger.ok, ledger.problems.join("; ")).to.equal(true);
  });
});
