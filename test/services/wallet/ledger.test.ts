import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { Code, type Client } from "@connectrpc/connect";
import { ChargeOutcome, OwnerType, type WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { ledgerFixtures, rpcFailure, walletClient } from "./wallet-client.ts";

describe("wallet ledger over RPC", () => {
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
  const newUser = () => fixtures.newUser();
  const fundedUser = (asset: string, amount: string) => fixtures.fundedUser(asset, amount);
  const balanceOf = async (ownerType: OwnerType, ownerId: string, asset: string) => (await fixtures.balanceOf(ownerType, ownerId, asset))!;
  const transactionCount = async (where = "true", params: unknown[] = []) =>
    Number((await sys.sql(`select count(*) as n from ledger_transactions where ${where}`, params))[0].n);

  it("credits a wallet user from the asset's external-deposits system account, balanced", async () => {
    const user = await newUser();
    const res = await wallet.creditWalletUser({ walletUserId: user.id, asset: "USDT_TRON", amount: "25.500000" });
    expect(res.account).to.include({ asset: "USDT_TRON", balance: "25.5", frozen: false });
    const entries = await sys.sql(
      `select a.owner_type, a.system_code, e.amount::text as amount, e.balance_after::text as after
       from ledger_entries e join ledger_accounts a on a.id = e.account_id where e.transaction_id = ? order by e.amount`,
      [res.transactionId],
    );
    expect(entries.map((e) => [e.owner_type, e.system_code, Number(e.amount)])).to.deep.equal([
      ["SYSTEM", "EXTERNAL_DEPOSITS", -25.5],
      ["WALLET_USER", null, 25.5],
    ]);
  });

  it("credits a wallet user once per idempotency key, replaying the first balance", async () => {
    const user = await newUser();
    const request = { walletUserId: user.id, asset: "BTC", amount: "0.3", idempotencyKey: `topup-${randomUUID()}` };
    const first = await wallet.creditWalletUser(request);
    await wallet.creditWalletUser({ ...request, idempotencyKey: undefined });
    const again = await wallet.creditWalletUser(request);
    expect(again.transactionId).to.equal(first.transactionId);
    expect(again.account!.balance).to.equal("0.3");
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "BTC")).to.equal("0.6");
  });

  it("charges: moves the exact amount from the user to the merchant as one balanced transaction", async () => {
    const user = await fundedUser("USDT_TRON", "100");
    const merchantId = await newMerchant();
    const res = await wallet.charge({
      idempotencyKey: randomUUID(),
      walletUserId: user.id,
      merchantId,
      asset: "USDT_TRON",
      amount: "10.5",
      description: "Pro plan",
    });
    expect(res).to.include({ outcome: ChargeOutcome.SUCCEEDED, balanceAfter: "89.5" });
    expect(res.transactionId).to.be.a("string");
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "USDT_TRON")).to.equal("89.5");
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "USDT_TRON")).to.equal("10.5");
    const [sum] = await sys.sql("select sum(amount)::text as total, count(*) as legs from ledger_entries where transaction_id = ?", [res.transactionId]);
    expect(Number(sum.total)).to.equal(0);
    expect(Number(sum.legs)).to.equal(2);
  });

  it("refuses a charge above the balance as INSUFFICIENT_FUNDS and moves nothing", async () => {
    const user = await fundedUser("BTC", "0.001");
    const merchantId = await newMerchant();
    const res = await wallet.charge({ idempotencyKey: randomUUID(), walletUserId: user.id, merchantId, asset: "BTC", amount: "0.00100001" });
    expect(res).to.include({ outcome: ChargeOutcome.INSUFFICIENT_FUNDS, balanceAfter: "0.001" });
    expect(res.transactionId).to.equal(undefined);
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "BTC")).to.equal("0.001");
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "BTC")).to.equal("0");
    expect(await transactionCount("merchant_id = ?", [merchantId])).to.equal(0);
  });

  it("replays a succeeded charge on retry with the same key: one movement, same answer", async () => {
    const user = await fundedUser("ETH", "1");
    const merchantId = await newMerchant();
    const request = { idempotencyKey: `renewal-${randomUUID()}`, walletUserId: user.id, merchantId, asset: "ETH", amount: "0.25" };
    const first = await wallet.charge(request);
    const second = await wallet.charge(request);
    expect(second.outcome).to.equal(ChargeOutcome.SUCCEEDED);
    expect(second.transactionId).to.equal(first.transactionId);
    expect(second.balanceAfter).to.equal("0.75");
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "ETH")).to.equal("0.75");
    expect(await transactionCount("idempotency_key = ?", [request.idempotencyKey])).to.equal(1);
  });

  it("runs parallel retries with the same key exactly once", async () => {
    const user = await fundedUser("USDC_ETH", "50");
    const request = { idempotencyKey: randomUUID(), walletUserId: user.id, merchantId: await newMerchant(), asset: "USDC_ETH", amount: "20" };
    const results = await Promise.all(Array.from({ length: 10 }, () => wallet.charge(request)));
    expect(new Set(results.map((r) => r.transactionId)).size).to.equal(1);
    expect(results.every((r) => r.outcome === ChargeOutcome.SUCCEEDED && r.balanceAfter === "30")).to.equal(true);
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "USDC_ETH")).to.equal("30");
  });

  it("does not make a refusal final: a retry with the same key after a top-up succeeds (every attempt is recorded)", async () => {
    const user = await fundedUser("USDT_TRON", "5");
    const request = { idempotencyKey: randomUUID(), walletUserId: user.id, merchantId: await newMerchant(), asset: "USDT_TRON", amount: "10" };
    expect((await wallet.charge(request)).outcome).to.equal(ChargeOutcome.INSUFFICIENT_FUNDS);
    await wallet.creditWalletUser({ walletUserId: user.id, asset: "USDT_TRON", amount: "5" });
    const retried = await wallet.charge(request);
    expect(retried).to.include({ outcome: ChargeOutcome.SUCCEEDED, balanceAfter: "0" });
    const attempts = await sys.sql("select outcome from wallet_charge_attempts where idempotency_key = ? order by created_at", [request.idempotencyKey]);
    expect(attempts.map((a) => a.outcome)).to.deep.equal(["INSUFFICIENT_FUNDS", "SUCCEEDED"]);
  });

  it("refuses a key reused for a different movement with 409 IDEMPOTENCY_KEY_REUSED", async () => {
    const user = await fundedUser("USDT_TRON", "100");
    const request = { idempotencyKey: randomUUID(), walletUserId: user.id, merchantId: await newMerchant(), asset: "USDT_TRON", amount: "10" };
    await wallet.charge(request);
    expect(await rpcFailure(wallet.charge({ ...request, amount: "11" }))).to.include({ code: Code.AlreadyExists, errorCode: "IDEMPOTENCY_KEY_REUSED" });
    expect(
      await rpcFailure(wallet.creditMerchant({ idempotencyKey: request.idempotencyKey, merchantId: request.merchantId, asset: "USDT_TRON", amount: "10" })),
    ).to.include({
      errorCode: "IDEMPOTENCY_KEY_REUSED",
    });
    // "10" and "10.000000" are the same amount: that is a retry, not a reuse.
    expect((await wallet.charge({ ...request, amount: "10.000000" })).outcome).to.equal(ChargeOutcome.SUCCEEDED);
  });

  it("answers ACCOUNT_FROZEN when the user or the account is frozen, and charges again once unfrozen", async () => {
    const user = await fundedUser("USDT_TRON", "100");
    const merchantId = await newMerchant();
    const charge = () => wallet.charge({ idempotencyKey: randomUUID(), walletUserId: user.id, merchantId, asset: "USDT_TRON", amount: "1" });

    await wallet.freezeWalletUser({ id: user.id });
    expect(await charge()).to.include({ outcome: ChargeOutcome.ACCOUNT_FROZEN, balanceAfter: "100" });
    // Credits still land on a frozen user.
    await wallet.creditWalletUser({ walletUserId: user.id, asset: "USDT_TRON", amount: "1" });
    await wallet.unfreezeWalletUser({ id: user.id });

    const frozen = await wallet.freezeAccount({ ownerType: OwnerType.WALLET_USER, ownerId: user.id, asset: "USDT_TRON" });
    expect(frozen.account).to.include({ asset: "USDT_TRON", balance: "101", frozen: true });
    expect((await charge()).outcome).to.equal(ChargeOutcome.ACCOUNT_FROZEN);
    // Only that asset's account is frozen.
    await wallet.creditWalletUser({ walletUserId: user.id, asset: "BTC", amount: "1" });
    expect(
      (await wallet.charge({ idempotencyKey: randomUUID(), walletUserId: user.id, merchantId: await newMerchant(), asset: "BTC", amount: "0.5" })).outcome,
    ).to.equal(ChargeOutcome.SUCCEEDED);
    await wallet.unfreezeAccount({ ownerType: OwnerType.WALLET_USER, ownerId: user.id, asset: "USDT_TRON" });
    expect(await charge()).to.include({ outcome: ChargeOutcome.SUCCEEDED, balanceAfter: "100" });
  });

  it("never overdraws under 20 parallel charges against a balance that covers 5", async () => {
    const user = await fundedUser("USDT_TRON", "50");
    const merchantId = await newMerchant();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => wallet.charge({ idempotencyKey: randomUUID(), walletUserId: user.id, merchantId, asset: "USDT_TRON", amount: "10" })),
    );
    expect(results.filter((r) => r.outcome === ChargeOutcome.SUCCEEDED)).to.have.length(5);
    expect(results.filter((r) => r.outcome === ChargeOutcome.INSUFFICIENT_FUNDS)).to.have.length(15);
    // The balances after the successes are distinct steps 40, 30, 20, 10, 0: each saw the one before.
    const steps = results
      .filter((r) => r.outcome === ChargeOutcome.SUCCEEDED)
      .map((r) => Number(r.balanceAfter))
      .sort((a, b) => a - b);
    expect(steps).to.deep.equal([0, 10, 20, 30, 40]);
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "USDT_TRON")).to.equal("0");
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "USDT_TRON")).to.equal("50");
  });

  it("credits merchants idempotently from the payment-receipts system account", async () => {
    const merchantId = await newMerchant();
    const request = { idempotencyKey: `order-${randomUUID()}`, merchantId, asset: "BTC", amount: "0.00012345", description: "order 42" };
    const first = await wallet.creditMerchant(request);
    const again = await wallet.creditMerchant(request);
    expect(again.transactionId).to.equal(first.transactionId);
    expect(again.account).to.include({ asset: "BTC", balance: "0.00012345" });
    expect(await balanceOf(OwnerType.MERCHANT, merchantId, "BTC")).to.equal("0.00012345");
    const [source] = await sys.sql(
      "select a.system_code from ledger_entries e join ledger_accounts a on a.id = e.account_id where e.transaction_id = ? and e.amount < 0",
      [first.transactionId],
    );
    expect(source.system_code).to.equal("PAYMENT_RECEIPTS");
  });

  it("refuses amounts with more fraction digits than the asset has, zero, unknown assets and bad ids, naming the field", async () => {
    const user = await fundedUser("BTC", "1");
    const base: Record<string, string> = { idempotencyKey: randomUUID(), walletUserId: user.id, merchantId: await newMerchant(), asset: "BTC", amount: "0.1" };
    const cases: [Record<string, string>, string][] = [
      [{ amount: "0.000000001" }, "amount: BTC has 8 decimals"],
      [{ amount: "0" }, "amount: must be greater than 0"],
      [{ amount: "-1" }, "amount:"],
      [{ amount: "1e3" }, "amount:"],
      [{ asset: "DOGE" }, "asset: must be one of USDT_TRON, USDC_ETH, BTC, ETH"],
      [{ merchantId: "m-1" }, "merchantId: must be a uuid"],
      [{ idempotencyKey: "" }, "idempotencyKey: is required"],
    ];
    for (const [change, message] of cases) {
      const failure = await rpcFailure(wallet.charge({ ...base, ...change }));
      expect(failure, JSON.stringify(change)).to.include({ code: Code.InvalidArgument, errorCode: "INVALID_REQUEST" });
      expect(failure.message).to.include(message);
    }
    expect((await rpcFailure(wallet.creditWalletUser({ walletUserId: user.id, asset: "USDT_TRON", amount: "1.0000001" }))).message).to.include(
      "amount: USDT_TRON has 6 decimals",
    );
    expect(await rpcFailure(wallet.charge({ ...base, walletUserId: randomUUID() }))).to.include({ code: Code.NotFound, errorCode: "WALLET_USER_NOT_FOUND" });
    expect(await rpcFailure(wallet.creditWalletUser({ walletUserId: randomUUID(), asset: "BTC", amount: "1" }))).to.include({
      errorCode: "WALLET_USER_NOT_FOUND",
    });
    expect(await balanceOf(OwnerType.WALLET_USER, user.id, "BTC")).to.equal("1");
  });

  it("lets the database refuse a negative user balance and any edit of ledger rows", async () => {
    const user = await fundedUser("ETH", "1");
    const [account] = await sys.sql("select id from ledger_accounts where owner_type = 'WALLET_USER' and owner_id = ? and asset = 'ETH'", [user.id]);
    let failure = "";
    await sys.sql("update ledger_accounts set balance = -1 where id = ?", [account.id]).catch((e: Error) => (failure = e.message));
    expect(failure).to.include("ledger_accounts_balance_non_negative");
    failure = "";
    await sys.sql("update ledger_entries set amount = amount * 2 where account_id = ?", [account.id]).catch((e: Error) => (failure = e.message));
    expect(failure).to.include("ledger rows are immutable");
    failure = "";
    await sys.sql("delete from ledger_transactions where wallet_user_id = ?", [user.id]).catch((e: Error) => (failure = e.message));
    expect(failure).to.include("ledger rows are immutable");
  });

  it("CheckLedger is ok over credits, charges and merchant credits, and reports a cached balance that drifted from its entries", async () => {
    // Its own movements, whatever ran before: two user credits, a charge, a refused charge, a merchant credit.
    const user = await fundedUser("USDT_TRON", "7");
    const payer = await fundedUser("BTC", "1");
    const merchantId = await newMerchant();
    expect((await wallet.charge({ idempotencyKey: randomUUID(), walletUserId: payer.id, merchantId, asset: "BTC", amount: "0.4" })).outcome).to.equal(
      ChargeOutcome.SUCCEEDED,
    );
    expect((await wallet.charge({ idempotencyKey: randomUUID(), walletUserId: payer.id, merchantId, asset: "BTC", amount: "2" })).outcome).to.equal(
      ChargeOutcome.INSUFFICIENT_FUNDS,
    );
    await wallet.creditMerchant({ idempotencyKey: randomUUID(), merchantId, asset: "BTC", amount: "0.1" });

    const clean = await wallet.checkLedger({});
    expect(clean.problems).to.deep.equal([]);
    expect(clean.ok).to.equal(true);
    // Every transaction and account is checked: at least the four transactions and six accounts above.
    const [all] = await sys.sql("select (select count(*) from ledger_transactions) as transactions, (select count(*) from ledger_accounts) as accounts");
    expect(Number(clean.transactionsChecked)).to.equal(Number(all.transactions)).and.to.be.at.least(4);
    expect(Number(clean.accountsChecked)).to.equal(Number(all.accounts)).and.to.be.at.least(6);

    const [account] = await sys.sql("select id from ledger_accounts where owner_type = 'WALLET_USER' and owner_id = ?", [user.id]);
    await sys.sql("update ledger_accounts set balance = 8 where id = ?", [account.id]);
    const broken = await wallet.checkLedger({});
    expect(broken.ok).to.equal(false);
    expect(broken.problems).to.include(`account ${account.id} caches balance 8 but its entries sum to 7`);
    expect(broken.problems.some((p) => p.startsWith("balances in USDT_TRON sum to 1"))).to.equal(true);
    await sys.sql("update ledger_accounts set balance = 7 where id = ?", [account.id]);
    expect((await wallet.checkLedger({})).ok).to.equal(true);
  });
});
