import { parseArgs } from "node:util";
import type { Config } from "../services/platform/config.ts";
import type { Orm } from "../services/platform/database/orm.ts";
import { openDatabase } from "./database.ts";
import { createClock } from "../services/platform/clock-factory.ts";
import type { UseCaseContext } from "../services/platform/use-case.ts";

/** What every operator command shares: a use-case context on the database, options and output. */
export interface OperatorCommand {
  usage: string;
  run(config: Config, argv: string[], json: boolean): Promise<number>;
}

/** Runs a use case against the database directly, as an operator's tool. */
export async function withContext<T>(config: Config, fn: (ctx: UseCaseContext) => Promise<T>): Promise<T> {
  const orm: Orm = await openDatabase(config.databaseUrl, 2, { preparedStatements: config.dbPreparedStatements });
  const clock = await createClock(config, orm);
  try {
    return await fn({ em: orm.em.fork(), clock: clock.clock });
  } finally {
    clock.stop();
    await orm.close();
  }
}

export function print(json: boolean, value: Record<string, unknown>, text: string): number {
  console.log(json ? JSON.stringify(value) : text);
  return 0;
}

export function options(argv: string[], names: string[]): Record<string, string | undefined> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: Object.fromEntries(names.map((n) => [n, { type: "string" as const }])),
  });
  return values as Record<string, string | undefined>;
}

export function required(values: Record<string, string | undefined>, name: string): string {
  const v = values[name];
  if (!v) throw new Error(`--${name} is required`);
  return v;
}
