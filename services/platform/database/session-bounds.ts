import type { Logger } from "../logger.ts";
import type { Orm } from "./orm.ts";

/** The server-side bounds a connection of this process actually runs with, in ms (0 = none). */
interface SessionBounds {
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * Reads the bounds PostgreSQL applies to this process's connections and warns
 * when a statement or an idle transaction is unbounded while the process was
 * told to bound it (DB_STATEMENT_TIMEOUT_MS).
 *
 * Why: the process sends both bounds as startup parameters of each
 * connection. A pooler in transaction mode cannot pass startup parameters on
 * (its server connections serve every client): PgBouncer refuses them unless
 * listed in `ignore_startup_parameters`, and then drops them. There the bounds
 * must be set where every server connection gets them (`ALTER ROLE … SET`,
 * docs/operations.md "Behind PgBouncer"), and a missing one is otherwise invisible until a
 * stuck statement holds its locks for ever. One query at start; a database
 * that does not answer yet is the readiness check's business, not this one's.
 */
export async function checkSessionBounds(orm: Orm, statementTimeoutMs: number, logger: Logger): Promise<SessionBounds | undefined> {
  let bounds: SessionBounds;
  try {
    const rows = await orm.em
      .fork()
      .execute<{ name: string; setting: string }[]>(
        "select name, setting from pg_settings where name in ('statement_timeout', 'idle_in_transaction_session_timeout')",
      );
    const ms = (name: string) => Number(rows.find((r) => r.name === name)?.setting ?? 0);
    bounds = { statementTimeoutMs: ms("statement_timeout"), idleInTransactionTimeoutMs: ms("idle_in_transaction_session_timeout") };
  } catch {
    return undefined;
  }
  if (bounds.statementTimeoutMs === 0 || bounds.idleInTransactionTimeoutMs === 0) {
    logger.warn(
      { ...bounds, expectedStatementTimeoutMs: statementTimeoutMs },
      "PostgreSQL does not bound statements or idle transactions on this process's connections (behind a pooler in transaction mode, set statement_timeout and idle_in_transaction_session_timeout on the role: see docs/operations.md, Behind PgBouncer)",
    );
  } else if (bounds.statementTimeoutMs !== statementTimeoutMs) {
    logger.info(
      { ...bounds, expectedStatementTimeoutMs: statementTimeoutMs },
      "PostgreSQL's statement_timeout differs from DB_STATEMENT_TIMEOUT_MS (set on the role or by a pooler)",
    );
  }
  return bounds;
}
