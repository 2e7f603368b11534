#!/usr/bin/env node
/**
 * Operator CLI and process entry point: `billing start <role>`, `billing migrate`,
 * and operator commands (`merchants create`, `api-keys create|revoke`, …).
 * Output is human text, or JSON with --json.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../services/platform/config.ts";
import { createLogger } from "../services/platform/logger.ts";
import { DomainError } from "../services/platform/errors.ts";
import { startCommand } from "./start.ts";
import { migrateCommand, operatorCommands } from "./operator.ts";

const USAGE = `usage: billing <command> [options]

  start <role> [<role>…]        run roles in this process: all, gateway, services, workers,
                                a service (merchants, catalog, wallet, subscriptions, orders, events, sandbox)
                                or a worker group (scheduler, renewals, webhooks, payments, emails)
  migrate                       create the database if missing and apply pending migrations
${Object.values(operatorCommands)
  .map((c) => `  ${c.usage}`)
  .join("\n")}

  --json                        print JSON`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help || positionals.length === 0) {
    console.log(USAGE);
    return positionals.length === 0 && !values.help ? 2 : 0;
  }
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const [command, ...rest] = positionals;
  if (command === "start") return startCommand(config, logger, rest);
  if (command === "migrate") return migrateCommand(config, Boolean(values.json));
  const key = `${command} ${rest[0] ?? ""}`.trim();
  // Own keys only: `billing constructor` is an unknown command, not Object.prototype.constructor.
  const op = Object.hasOwn(operatorCommands, key) ? operatorCommands[key] : undefined;
  if (!op) {
    console.error(`unknown command: ${key}\n\n${USAGE}`);
    return 2;
  }
  return op.run(config, argv, Boolean(values.json));
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (err) => {
    if (err instanceof ConfigError || err instanceof DomainError) console.error(err.message);
    else console.error(err instanceof Error ? `error: ${err.message}` : err);
    process.exitCode = 1;
  },
);
