import type pg from "pg";

/**
 * Gives a pool slot back whenever its connection dies while checked out.
 *
 * Why: Kysely (under MikroORM 7) releases a transaction's connection only
 * after its COMMIT or ROLLBACK succeeds (`ControlledTransaction.commit/rollback`
 * call `connection.release()` after the statement), and MikroORM's
 * `transactional()` only logs a failed rollback. When PostgreSQL dies
 * (`pg_ctl stop -m immediate`, a failover, a killed backend) every transaction
 * open at that moment fails its ROLLBACK too, so its client is never released:
 * pg-pool still counts it in `max`, and once every slot is gone each later
 * `connect()` waits forever — the process wedges until restarted.
 *
 * The fix is local to the pool we create: each client handed out is watched
 * for its connection ending; if it ends before the holder released it, the
 * slot is released at once with an error (pg-pool then drops the client and
 * opens a fresh one for the next caller). `release` is made idempotent, so a
 * holder that does release later (a plain query's `finally`) changes nothing.
 */
export function guardPoolSlots(pool: pg.Pool): void {
  type Callback = (err: Error | undefined, client?: pg.PoolClient, release?: (err?: Error | boolean) => void) => void;
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  // Both forms: Kysely calls connect() for a promise; pool.query() calls connect(callback).
  const guarded = (callback?: Callback): Promise<pg.PoolClient> | undefined => {
    const checkedOut = connect().then((client) => {
      watchCheckout(client);
      return client;
    });
    if (!callback) return checkedOut;
    checkedOut.then(
      (client) => callback(undefined, client, client.release),
      (err: Error) => callback(err),
    );
    return undefined;
  };
  // Instance-local: only this pool's connect() changes.
  (pool as unknown as { connect: typeof guarded }).connect = guarded;
}

function watchCheckout(client: pg.PoolClient): void {
  const release = client.release.bind(client);
  let released = false;
  const releaseOnce = (err?: Error | boolean) => {
    if (released) return;
    released = true;
    client.removeListener("end", onEnd);
    release(err);
  };
  const onEnd = () => releaseOnce(new Error("connection ended while checked out"));
  client.once("end", onEnd);
  client.release = releaseOnce;
  // Already dead between the pool's check and ours: give the slot back now.
  const state = client as unknown as { _ending?: boolean; _queryable?: boolean };
  if (state._ending || state._queryable === false) releaseOnce(new Error("connection ended while checked out"));
}
