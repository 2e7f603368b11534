import pg from "pg";

/**
 * A pg client that runs every statement as an unnamed one, whatever `name`
 * its caller gave (`DB_PREPARED_STATEMENTS=false`).
 *
 * Why: a named statement lives in one server session, and a pooler in
 * transaction mode (PgBouncer 1.18) hands each transaction to whichever
 * server connection is free: a statement prepared on one is missing on the
 * next ("prepared statement … does not exist") or already there under the
 * same name ("… already exists"). An unnamed statement is parsed, bound and
 * executed in one exchange that ends with its Sync, so it never outlives the
 * transaction the pooler assigned. It costs a parse and a plan per execution,
 * as the ORM's own statements do.
 *
 * Done on the pool's client class, not in each caller: every statement of the
 * process (prepared.ts's runPrepared, and any other `{ name, text }` query)
 * obeys the one setting. Streams and cursors (submittables) pass unchanged:
 * they are unnamed already.
 */
export class UnnamedStatementsClient extends pg.Client {
  // One signature for pg's overloads: only a plain query config is rewritten.
  query(...args: unknown[]): any {
    const config = args[0] as { name?: unknown; submit?: unknown } | null;
    if (config && typeof config === "object" && typeof config.submit !== "function" && config.name) {
      args[0] = { ...config, name: undefined };
    }
    return (super.query as (...a: unknown[]) => unknown)(...args);
  }
}
