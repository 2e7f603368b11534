import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { Code, type Client } from "@connectrpc/connect";
import { ChargeOutcome, OwnerType, type WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { ledgerFixtures, rpcFailure, walletClient } from "./wallet-client.ts";

/** ChargeBatch: each item is exactly a Charge; the merchant's account moves once per batch. */
describe("wallet ChargeBatch over RPC", () => {
  let client: ReturnType<typeof walletClient>;
  let wallet: Client<typeof WalletService>;

  const sys = useTestSystem({ services: ["wallet"], gateway: false, workerGroups: [] });
  before(async () => {
    client = walletClient(sys);
    wallet = client.wallet;
    fixtures = ledgerFixtures(sys, wallet);
  });
  after(async () => {
    client?.close();
  });

  let fixtures: ReturnType<typeof ledgerFixtures>;
  const newMerchant = () => fixtures.newMerchant();
  const fundedUser = (asset: string, amount: string) => fixtures.fundedUser(asset, amount);
  const balanceOf = (ownerType: OwnerType, ownerId: string, asset: string) => fixtures.balanceOf(ownerType, ownerId, asset);
  const item = (walletUserId: string, amount: string, key: string = randomUUID()) => ({
    idempotencyKey: key,
    walletUserId,
    asset: "USDT_TRON",
    amount,
    description: "batch",
  });

  it("charges each item in order: two charges of one account see each other; a short one is refused; each success is its own balanced transaction", async () => {
    const merchantId = await newMerchant();
    const a = await fundedUser("USDT_TRON", "10");
    const b = await fundedUser("USDT_TRON", "3");
    const { results } = await wallet.chargeBatch({ merchantId, charges: [item(a.id, "6"), item(b.id, "2.5"), item(a.id, "6"), item(a.id, "4")] });
    expect(results.map((r) => r.outcome)).to.deep.equal([
      ChargeOutcome.SUCCEEDED,
      ChargeOutcome.SUCCEEDED,
      ChargeOutcome.INSUFFICIENT_FUNDS,
      ChargeOutcome.SUCCEEDED,
    ]);
    expect(results.map((r) => r.balanceAfter)).to.deep.equal(["4", "0.5", "4", "0"]);
    expect(results[2]!.transactionId).to.equal(undefined);
    expect(await balanceOf(OwnerType.WALLET_USER, a.id, "USDT_TRON")).to.equal("0");
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "USDT_TRON")).to.equal("12.5");

    const legs = await sys.sql<{ transaction_id: string; total: string; n: string }>(
      "select transaction_id, sum(amount)::text as total, count(*) as n from ledger_entries where transaction_id in (?, ?, ?) group by transaction_id",
      [results[0]!.transactionId, results[1]!.transactionId, results[3]!.transactionId],
    );
    expect(legs).to.have.length(3);
    for (const l of legs) expect([Number(l.total), Number(l.n)]).to.deep.equal([0, 2]);
    // The merchant's entries carry the running balance, in the batch's order.
    const merchantEntries = await sys.sql<{ after: string }>(
      `select e.balance_after::text as after from ledger_entries e join ledger_accounts a on a.id = e.account_id
        where a.owner_type = 'MERCHANT' and a.owner_id = ? order by e.balance_after`,
      [merchantId],
    );
    expect(merchantEntries.map((e) => Number(e.after))).to.deep.equal([6, 8.5, 12.5]);
    const attempts = await sys.sql<{ outcome: string }>("select outcome from wallet_charge_attempts where merchant_id = ? order by outcome", [merchantId]);
    expect(attempts.map((r) => r.outcome)).to.deep.equal(["INSUFFICIENT_FUNDS", "SUCCEEDED", "SUCCEEDED", "SUCCEEDED"]);
    expect((await wallet.checkLedger({})).ok).to.equal(true);
  });

  it("batches, single charges and refunds of one merchant and the same users, all at once: no deadlock, no overdraft, the books balance", async () => {
    const merchantId = await newMerchant();
    const users = [await fundedUser("USDT_TRON", "50"), await fundedUser("USDT_TRON", "50"), await fundedUser("USDT_TRON", "50")];
    const calls: Promise<unknown>[] = [];
    for (let k = 0; k < 8; k++) {
      calls.push(wallet.chargeBatch({ merchantId, charges: users.map((u) => item(u.id, "1")) }));
      calls.push(wallet.charge({ ...item(users[k % 3]!.id, "1"), merchantId }));
      calls.push(wallet.refund({ idempotencyKey: randomUUID(), merchantId, walletUserId: users[k % 3]!.id, asset: "USDT_TRON", amount: "2" }));
    }
    const settled = await Promise.allSettled(calls);
    expect(settled.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
    const refunded = settled.filter((r, i) => i % 3 === 2 && (r as PromiseFulfilledResult<{ outcome: number }>).value.outcome === 1).length;
    // 8 × 3 batched + 8 single charges of 1 in, 2 out per refund that found the money.
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "USDT_TRON")).to.equal(String(32 - 2 * refunded));
    const check = await wallet.checkLedger({});
    expect(check.ok, check.problems.join("; ")).to.equal(true);
  });

  it("replays a key that succeeded (in a batch or a single Charge) and moves nothing; a refused key is evaluated again", async () => {
    const merchantId = await newMerchant();
    const user = await fundedUser("USDT_TRON", "5");
    const single = randomUUID();
    const first = await wallet.charge({ ...item(user.id, "2", single), merchantId });
    const refused = randomUUID();
    const once = await wallet.chargeBatch({ merchantId, charges: [item(user.id, "2", single), item(user.id, "9", refused)] });
    expect(once.results.map((r) => r.outcome)).to.deep.equal([ChargeOutcome.SUCCEEDED, ChargeOutcome.INSUFFICIENT_FUNDS]);
    expect(once.results[0]).to.include({ transactionId: first.transactionId, balanceAfter: "3" });
    await wallet.creditWalletUser({ walletUserId: user.id, asset: "USDT_TRON", amount: "10" });
    const again = await wallet.chargeBatch({ merchantId, charges: [item(user.id, "9", refused)] });
    expect(again.results[0]).to.include({ outcome: ChargeOutcome.SUCCEEDED, balanceAfter: "4" });
    const replayed = await wallet.chargeBatch({ merchantId, charges: [item(user.id, "9", refused)] });
    expect(replayed.results[0]!.transactionId).to.equal(again.results[0]!.transactionId);
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "USDT_TRON")).to.equal("4");
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "USDT_TRON")).to.equal("11");
  });

  it("refuses a frozen wallet user's item as ACCOUNT_FROZEN and charges the others", async () => {
    const merchantId = await newMerchant();
    const frozen = await fundedUser("USDT_TRON", "5");
    const other = await fundedUser("USDT_TRON", "5");
    await wallet.freezeWalletUser({ id: frozen.id });
    const { results } = await wallet.chargeBatch({ merchantId, charges: [item(frozen.id, "1"), item(other.id, "1")] });
    expect(results.map((r) => r.outcome)).to.deep.equal([ChargeOutcome.ACCOUNT_FROZEN, ChargeOutcome.SUCCEEDED]);
    expect(await balanceOf(OwnerType.WALLET_USER, frozen.id, "USDT_TRON")).to.equal("5");
    // A batch refused whole still records every attempt (the audit trail) and moves nothing.
    const refused = await wallet.chargeBatch({ merchantId, charges: [item(frozen.id, "1"), item(other.id, "100")] });
    expect(refused.results.map((r) => r.outcome)).to.deep.equal([ChargeOutcome.ACCOUNT_FROZEN, ChargeOutcome.INSUFFICIENT_FUNDS]);
    const attempts = await sys.sql<{ outcome: string }>("select outcome from wallet_charge_attempts where merchant_id = ? order by outcome", [merchantId]);
    expect(attempts.map((a) => a.outcome)).to.deep.equal(["ACCOUNT_FROZEN", "ACCOUNT_FROZEN", "INSUFFICIENT_FUNDS", "SUCCEEDED"]);
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "USDT_TRON")).to.equal("1");
  });

  it("refuses bad input naming the item and field, and writes nothing", async () => {
    const merchantId = await newMerchant();
    const user = await fundedUser("USDT_TRON", "5");
    const before = await sys.sql<{ n: string }>("select count(*) as n from ledger_transactions");
    const cases: [Parameters<typeof wallet.chargeBatch>[0], RegExp][] = [
      [{ merchantId, charges: [item(user.id, "1"), item(user.id, "1.0000001")] }, /^charges\[1\]\.amount: /],
      [{ merchantId, charges: [item(user.id, "1"), { ...item(user.id, "1"), walletUserId: "nope" }] }, /^charges\[1\]\.walletUserId: must be a uuid/],
      [{ merchantId, charges: [{ ...item(user.id, "1"), asset: "DOGE" }] }, /^charges\[0\]\.asset: /],
      [{ merchantId, charges: [item(user.id, "1", "same"), item(user.id, "1", "same")] }, /^charges\[1\]\.idempotencyKey: appears twice/],
      [{ merchantId, charges: [{ ...item(user.id, "1"), idempotencyKey: "" }] }, /^charges\[0\]\.idempotencyKey: is required/],
      [{ merchantId, charges: Array.from({ length: 501 }, () => item(user.id, "0.01")) }, /^charges: at most 500 items/],
    ];
    for (const [request, message] of cases) {
      const failure = await rpcFailure(wallet.chargeBatch(request));
      expect(failure.code, String(message)).to.equal(Code.InvalidArgument);
      expect(failure.message).to.match(message);
    }
    expect((await rpcFailure(wallet.chargeBatch({ merchantId: randomUUID(), charges: [item(user.id, "1")] }))).code).to.equal(Code.NotFound);
    expect((await rpcFailure(wallet.chargeBatch({ merchantId, charges: [item(randomUUID(), "1")] }))).errorCode).to.equal("WALLET_USER_NOT_FOUND");
    const after = await sys.sql<{ n: string }>("select count(*) as n from ledger_transactions");
    expect(after[0]!.n).to.equal(before[0]!.n);
  });

  it("answers IDEMPOTENCY_KEY_REUSED for a key used for another movement, and moves nothing", async () => {
    const merchantId = await newMerchant();
    const user = await fundedUser("USDT_TRON", "5");
    const key = randomUUID();
    await wallet.charge({ ...item(user.id, "1", key), merchantId });
    const failure = await rpcFailure(wallet.chargeBatch({ merchantId, charges: [item(user.id, "2"), item(user.id, "3", key)] }));
    expect(failure.errorCode).to.equal("IDEMPOTENCY_KEY_REUSED");
    expect(failure.message).to.match(/^charges\[1\]\.idempotencyKey/);
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "USDT_TRON")).to.equal("4");
  });
});
