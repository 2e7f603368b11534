import type { UseCaseContext } from "../services/platform/use-case.ts";
import { options, print, required, withContext, type OperatorCommand } from "./command-support.ts";
import { createWalletUser } from "../services/wallet/create-wallet-user.ts";
import { creditWalletUser } from "../services/wallet/credit-wallet-user.ts";
import { getWalletUser } from "../services/wallet/get-wallet-user.ts";
import { listAccounts } from "../services/wallet/list-accounts.ts";
import { checkLedger } from "../services/wallet/check-ledger.ts";
import { freezeWalletUser, unfreezeWalletUser } from "../services/wallet/freeze-wallet-user.ts";
import { balanceRecord, walletUserRecord } from "../services/wallet/wallet-records.ts";
import type { WalletUserRow } from "../services/wallet/entities.ts";

/** The operator REST API's wallet user (the same record). */
const userJson = (ctx: UseCaseContext, user: WalletUserRow) => walletUserRecord(user, ctx.clock.now());

/** Operator commands of the wallet domain, spread into operatorCommands. */
export const walletCommands: Record<string, OperatorCommand> = {
  "wallet-users create": {
    usage: "wallet-users create --email <e> --password <p> --pin <6 digits>   create a wallet user",
    async run(config, argv, json) {
      const values = options(argv, ["email", "password", "pin"]);
      const input = { email: required(values, "email"), password: required(values, "password"), pin: required(values, "pin") };
      const user = await withContext(config, async (ctx) => userJson(ctx, await createWalletUser(ctx, input)));
      return print(json, user, `wallet user ${user.id} (${user.email})`);
    },
  },
  "wallet-users get": {
    usage: "wallet-users get --id <id>         a wallet user and a balance per asset",
    async run(config, argv, json) {
      const id = required(options(argv, ["id"]), "id");
      const body = await withContext(config, async (ctx) => {
        const user = await getWalletUser(ctx, id);
        const accounts = await listAccounts(ctx, { type: "WALLET_USER", id: user.id });
        return { ...userJson(ctx, user), balances: accounts.map(balanceRecord) };
      });
      const lines = body.balances.map((b) => `  ${b.asset.padEnd(10)} ${b.balance}${b.frozen ? " (frozen)" : ""}`);
      return print(json, body, `wallet user ${body.id} (${body.email}) ${body.status}\n${lines.join("\n")}`);
    },
  },
  "wallet-users credit": {
    usage: "wallet-users credit --id <id> --asset <code> --amount <n> [--idempotency-key <k>]   top up from outside",
    async run(config, argv, json) {
      const values = options(argv, ["id", "asset", "amount", "idempotency-key"]);
      const walletUserId = required(values, "id");
      const res = await withContext(config, (ctx) =>
        creditWalletUser(ctx, {
          walletUserId,
          asset: required(values, "asset"),
          amount: required(values, "amount"),
          idempotencyKey: values["idempotency-key"],
        }),
      );
      const body = { transactionId: res.transactionId, walletUserId: walletUserId.toLowerCase(), asset: res.asset, balance: res.balanceAfter };
      return print(json, body, `credited; ${res.asset} balance is now ${res.balanceAfter} (transaction ${res.transactionId})`);
    },
  },
  "wallet-users freeze": {
    usage: "wallet-users freeze --id <id>      charges answer ACCOUNT_FROZEN until unfrozen",
    async run(config, argv, json) {
      const id = required(options(argv, ["id"]), "id");
      const user = await withContext(config, async (ctx) => userJson(ctx, await freezeWalletUser(ctx, id)));
      return print(json, user, `wallet user ${user.id} is ${user.status}`);
    },
  },
  "wallet-users unfreeze": {
    usage: "wallet-users unfreeze --id <id>",
    async run(config, argv, json) {
      const id = required(options(argv, ["id"]), "id");
      const user = await withContext(config, async (ctx) => userJson(ctx, await unfreezeWalletUser(ctx, id)));
      return print(json, user, `wallet user ${user.id} is ${user.status}`);
    },
  },
  "ledger check": {
    usage: "ledger check                       audit the ledger (exit status 1 when problems are found)",
    async run(config, _argv, json) {
      const res = await withContext(config, (ctx) => checkLedger(ctx));
      const text = res.ok
        ? `ledger ok: ${res.transactionsChecked} transactions, ${res.accountsChecked} accounts`
        : `ledger has ${res.problems.length} problem(s):\n${res.problems.map((p) => `  ${p}`).join("\n")}`;
      print(json, { ...res }, text);
      return res.ok ? 0 : 1;
    },
  },
};
