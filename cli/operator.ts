import { parseArgs } from "node:util";
import type { Config } from "../services/platform/config.ts";
import { migrateDatabase } from "./database.ts";
import { print, required, withContext, type OperatorCommand } from "./command-support.ts";
import { walletCommands } from "./wallet-commands.ts";
import { createMerchant } from "../services/merchants/create-merchant.ts";
import { createApiKey } from "../services/merchants/create-api-key.ts";
import { revokeApiKey } from "../services/merchants/revoke-api-key.ts";
import { announceOnce } from "../services/merchants/key-revocations.ts";
import { reconcileCommands } from "./reconcile-command.ts";

export type { OperatorCommand };

export async function migrateCommand(config: Config, json: boolean): Promise<number> {
  const { databaseCreated, applied } = await migrateDatabase(config);
  return print(json, { databaseCreated, applied }, applied.length ? `applied: ${applied.join(", ")}` : "no pending migrations");
}

export const operatorCommands: Record<string, OperatorCommand> = {
  "merchants create": {
    usage: "merchants create --name <name>    create a merchant and its first API key",
    async run(config, argv, json) {
      const name = required(withPositionals(argv, ["name"]), "name");
      const res = await withContext(config, (ctx) => createMerchant(ctx, { name, keyMode: config.apiKeyMode }));
      return print(
        json,
        { id: res.merchant.id, name: res.merchant.name, apiKeyId: res.apiKeyId, apiKey: res.apiKey },
        `merchant ${res.merchant.id} (${res.merchant.name})\nAPI key ${res.apiKeyId}: ${res.apiKey}\n(the key is shown once)`,
      );
    },
  },
  "api-keys create": {
    usage: "api-keys create --merchant <id>   create another API key",
    async run(config, argv, json) {
      const merchantId = required(withPositionals(argv, ["merchant"]), "merchant");
      const res = await withContext(config, (ctx) => createApiKey(ctx, { merchantId, keyMode: config.apiKeyMode }));
      return print(json, { id: res.id, apiKey: res.apiKey }, `API key ${res.id}: ${res.apiKey}\n(the key is shown once)`);
    },
  },
  "api-keys revoke": {
    usage: "api-keys revoke --merchant <id> --key <keyId>",
    async run(config, argv, json) {
      const values = withPositionals(argv, ["merchant", "key"]);
      const merchantId = required(values, "merchant");
      const keyId = required(values, "key");
      await withContext(config, (ctx) => revokeApiKey(ctx, { merchantId, keyId }, announceOnce(config, config.queuePrefix)));
      return print(json, { id: keyId, revoked: true }, `API key ${keyId} revoked`);
    },
  },
  ...walletCommands,
  ...reconcileCommands,
};

/**
 * `--merchant <id>` is the documented form; `--merchant-id`/`--key-id` and bare
 * positionals after the subcommand (`api-keys revoke <merchantId> <keyId>`) are
 * accepted too, since operators and scripts reach for all of them.
 */
function withPositionals(argv: string[], names: string[]): Record<string, string | undefined> {
  const flags = names.flatMap((n) => [n, `${n}-id`]);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: Object.fromEntries(flags.map((n) => [n, { type: "string" as const }])),
  });
  const free = positionals.slice(2); // after "<noun> <verb>"
  const given = values as Record<string, string | undefined>;
  return Object.fromEntries(names.map((n, i) => [n, given[n] ?? given[`${n}-id`] ?? free[i]]));
}
