import { CompiledQuery, type Kysely } from "kysely";
import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * em.execute for the statements that carry many values: the same `?`
 * placeholders, run on the connection of `em` (inside its transaction when it
 * has one), but the values are bound as parameters instead of inlined into
 * the text.
 *
 * Why: em.execute inlines every value, escaping each string one character at
 * a time in JS. For the set-based statements (a renewal set's hundreds of
 * rows, as one JSON parameter or as a values list) that escaping and the
 * longer text it writes to the socket were the largest CPU item left in B8's
 * profile after the ORM's unit of work. Bound, the values go out as they are.
 * The statement is unnamed (parsed at each execution, as em.execute's), so it
 * holds behind a pooler in transaction mode too.
 *
 * The values are pg's (a Date as a timestamp, an array as a Postgres array,
 * an object as JSON): unlike em.execute, an array is never spread into
 * `in (?)`. Every `?` of the text is a placeholder: a statement that needs
 * the character elsewhere (jsonb's `?` operator, a literal) uses em.execute.
 *
 * Kysely is the ORM's own SQL layer (the same connection and transaction);
 * it is a direct dependency for its CompiledQuery only. Errors are converted
 * as the ORM converts them (its DriverException classes), so callers see the
 * same errors as from em.execute.
 */
export async function executeBound<R>(em: EntityManager, sql: string, values: readonly unknown[]): Promise<R[]> {
  const executor = (em.getTransactionContext() ?? em.getConnection().getClient()) as Kysely<unknown>;
  try {
    return (await executor.executeQuery<R>(CompiledQuery.raw(numbered(sql, values.length), [...values]))).rows;
  } catch (err) {
    throw err instanceof Error ? em.getDriver().convertException(err) : err;
  }
}

/** `?` → `$1`, `$2`, … in order; the count must match the values (a mismatch is a bug: thrown, nothing sent). */
function numbered(sql: string, count: number): string {
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  if (n !== count) throw new Error(`executeBound: ${n} placeholders for ${count} values`);
  return text;
}

/** A data-modifying statement (`?` placeholders, as executeBound's) whose `returning` gives one row per row it must write. */
export interface Write {
  sql: string;
  values: unknown[];
  /** The rows it must write: fewer is a bug (a row missing), and the whole statement is refused. */
  rows: number;
  /** What it writes, for that error. */
  what: string;
}

/**
 * Runs several writes as one statement (each a data-modifying CTE: one round
 * trip), and throws, so that the caller's transaction rolls back, when any
 * wrote another number of rows than it must. The writes run on the same
 * snapshot and none sees another's rows, so they must touch different rows.
 *
 * Why one statement: a renewal set writes its charges and inserts its events
 * while it holds its merchants' receipt counters (receipt-number.ts), which
 * every other settle of the merchant waits for; each round trip there is
 * paid by all of them.
 */
export async function executeWrites(em: EntityManager, writes: readonly Write[]): Promise<void> {
  const due = writes.filter((w) => w.rows > 0);
  if (due.length === 0) return;
  const [counts] = await executeBound<Record<string, string>>(
    em,
    `with ${due.map((w, i) => `w${i} as (${w.sql})`).join(", ")} select ${due.map((_, i) => `(select count(*) from w${i}) as w${i}`).join(", ")}`,
    due.flatMap((w) => w.values),
  );
  due.forEach((w, i) => {
    const written = Number(counts?.[`w${i}`]);
    if (written !== w.rows) throw new Error(`${w.what}: ${written} of ${w.rows} rows written`);
  });
}
