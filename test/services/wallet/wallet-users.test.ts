import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { Code, type Client } from "@connectrpc/connect";
import type { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { rpcFailure, uniqueEmail, walletClient } from "./wallet-client.ts";

describe("wallet users over RPC", () => {
  let client: ReturnType<typeof walletClient>;
  let wallet: Client<typeof WalletService>;

  const sys = useTestSystem({ services: ["wallet"], gateway: false, workerGroups: [] });
  before(async () => {
    client = walletClient(sys);
    wallet = client.wallet;
  });
  after(async () => {
    client?.close();
  });

  it("stores the password and the PIN only as argon2id hashes", async () => {
    const email = uniqueEmail();
    const { user } = await wallet.createWalletUser({ email, password: "correct horse battery", pin: "482913" });
    expect(user).to.include({ email, status: "ACTIVE", pinLocked: false });
    const [row] = await sys.sql("select * from wallet_users where id = ?", [user!.id]);
    expect(row.password_hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.pin_hash).to.match(/^\$argon2id\$/);
    const stored = JSON.stringify(row);
    expect(stored).not.to.include("correct horse battery");
    expect(stored).not.to.include("482913");
    // Two users with the same PIN get different hashes (salted).
    const other = await wallet.createWalletUser({ email: uniqueEmail(), password: "another password", pin: "482913" });
    const [otherRow] = await sys.sql("select pin_hash from wallet_users where id = ?", [other.user!.id]);
    expect(otherRow.pin_hash).not.to.equal(row.pin_hash);
  });

  it("treats emails case-insensitively: stored lower-cased, unique, found in any case", async () => {
    const email = uniqueEmail("Mixed.Case");
    const { user } = await wallet.createWalletUser({ email, password: "password-1", pin: "111111" });
    expect(user!.email).to.equal(email.toLowerCase());

    const duplicate = await rpcFailure(wallet.createWalletUser({ email: email.toUpperCase(), password: "password-2", pin: "222222" }));
    expect(duplicate).to.include({ code: Code.AlreadyExists, errorCode: "WALLET_USER_ALREADY_EXISTS" });

    const found = await wallet.findWalletUserByEmail({ email: `  ${email.toUpperCase()} ` });
    expect(found.user!.id).to.equal(user!.id);
  });

  it("refuses bad input naming the field and the rule", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ email: "not-an-email", password: "password-1", pin: "123456" }, "email:"],
      [{ email: uniqueEmail(), password: "", pin: "123456" }, "password: must be 1 to 200 characters"],
      [{ email: uniqueEmail(), password: "x".repeat(201), pin: "123456" }, "password: must be 1 to 200 characters"],
      [{ email: uniqueEmail(), password: "password-1", pin: "12345" }, "pin: must be exactly 6 digits"],
      [{ email: uniqueEmail(), password: "password-1", pin: "12345a" }, "pin: must be exactly 6 digits"],
    ];
    for (const [input, message] of cases) {
      const failure = await rpcFailure(wallet.createWalletUser(input as never));
      expect(failure, JSON.stringify(input)).to.include({ code: Code.InvalidArgument, errorCode: "INVALID_REQUEST" });
      expect(failure.message).to.include(message);
    }
  });

  it("answers 404 WALLET_USER_NOT_FOUND for unknown ids and emails", async () => {
    const calls = [
      () => wallet.getWalletUser({ id: randomUUID() }),
      () => wallet.getWalletUser({ id: "not-a-uuid" }),
      () => wallet.findWalletUserByEmail({ email: uniqueEmail() }),
    ];
    for (const call of calls) {
      expect(await rpcFailure(call())).to.include({ code: Code.NotFound, errorCode: "WALLET_USER_NOT_FOUND" });
    }
  });

  it("returns the user with one zero balance per registry asset before any movement", async () => {
    const { user } = await wallet.createWalletUser({ email: uniqueEmail(), password: "password-1", pin: "123456" });
    const res = await wallet.getWalletUser({ id: user!.id });
    expect(res.user!.id).to.equal(user!.id);
    expect(res.accounts.map((a) => [a.asset, a.balance])).to.deep.equal([
      ["USDT_TRON", "0"],
      ["USDC_ETH", "0"],
      ["BTC", "0"],
      ["ETH", "0"],
    ]);
  });

  it("freezes and unfreezes a user through the status machine (illegal moves are 409)", async () => {
    const { user } = await wallet.createWalletUser({ email: uniqueEmail(), password: "password-1", pin: "123456" });
    expect((await wallet.freezeWalletUser({ id: user!.id })).user!.status).to.equal("FROZEN");
    expect(await rpcFailure(wallet.freezeWalletUser({ id: user!.id }))).to.include({
      code: Code.FailedPrecondition,
      errorCode: "INVALID_STATUS_TRANSITION",
    });
    expect((await wallet.unfreezeWalletUser({ id: user!.id })).user!.status).to.equal("ACTIVE");
    expect(await rpcFailure(wallet.unfreezeWalletUser({ id: user!.id }))).to.include({ errorCode: "INVALID_STATUS_TRANSITION" });
  });
});
