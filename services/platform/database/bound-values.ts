import { CompiledQuery, type Kysely } from "kysely";
import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * Runs a statement with `$n` placeholders on the connection of `em` (inside
 * its transaction when it has one, as em.execute does), its values bound as
 * parameters instead of inlined into the text.
 *
 * Why: em.execute inlines every value, escaping each string one character at
 * a time in JS. For the set-based statements that carry hundreds of rows as
 * one JSON parameter (a renewal set's events and rows: hundreds of KiB), that
 * escaping and the longer text it writes to the socket were the largest CPU
 * item left in B8's profile after the ORM's unit of work. Bound, the JSON
 * goes out as it is. The statement is unnamed (parsed at each execution, as
 * em.execute's), so it holds behind a pooler in transaction mode too.
 *
 * Kysely is the ORM's own SQL layer (the same connection and transaction);
 * it is a direct dependency for its CompiledQuery only. Errors are converted
 * as the ORM converts them (its DriverException classes), so callers and the
 * error mapping see the same errors as from em.execute.
 */
export async function executeBound<R>(em: EntityManager, sql: string, values: readonly unknown[]): Promise<R[]> {
  const executor = (em.getTransactionContext() ?? em.getConnection().getClient()) as Kysely<unknown>;
  try {
    return (await executor.executeQuery<R>(CompiledQuery.raw(sql, [...values]))).rows;
  } catch (err) {
    throw err instanceof Error ? em.getDriver().convertException(err) : err;
  }
}
