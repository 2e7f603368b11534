import type { EntityManager } from "@mikro-orm/postgresql";
import { WALLET_CALL_PENDING } from "./wallet-call-status.ts";

/**
 * The statements of the wallet-call protocol (wallet-call.ts says the protocol), for any kind's table: the table
 * name is a constant of the kind (WalletCall.table), never input. Every time here is database time, so leases and
 * back-offs hold across processes whatever a sandbox clock says.
 */

export const LEASE_SECONDS = 30;
/** Past its lease and back-off by this much, a PENDING row should have been finished by a sweep: reconciliation reports it. */
const STALE_AFTER_SECONDS = 600;

/**
 * Claims a PENDING row for one caller until the lease (database time) runs
 * out. Returns the fencing generation the caller now holds, or null when
 * someone else holds the lease or the row is no longer PENDING.
 */
export async function takeLease(em: EntityManager, table: string, id: string): Promise<number | null> {
  const rows = await em.execute<{ lease_generation: number }[]>(
    `update ${table} set lease_until = now() + make_interval(secs => ?), lease_generation = lease_generation + 1
      where id = ? and status = '${WALLET_CALL_PENDING}' and (lease_until is null or lease_until < now())
      returning lease_generation`,
    [LEASE_SECONDS, id],
  );
  return rows.length === 1 ? Number(rows[0]!.lease_generation) : null;
}

/**
 * Extends the leases a caller still holds, just before a call made long
 * after they were taken (a batch's later chunks): returns the ids still
 * held. A row whose lease ran out and was taken over is left out, so no call
 * is made for it under a generation that can no longer settle.
 */
export async function renewLeases(em: EntityManager, table: string, rows: readonly { id: string; generation: number }[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const held = await em.execute<{ id: string }[]>(
    `update ${table} t set lease_until = now() + make_interval(secs => ?)
       from json_to_recordset(?::json) as held(id uuid, generation int)
      where t.id = held.id and t.status = '${WALLET_CALL_PENDING}' and t.lease_generation = held.generation
      returning t.id`,
    [LEASE_SECONDS, JSON.stringify(rows)],
  );
  return new Set(held.map((r) => r.id));
}

/** The row's status, or undefined when it does not exist (read outside any lock: who holds the lease may change). */
export async function walletCallStatus(em: EntityManager, table: string, id: string): Promise<string | undefined> {
  const [row] = await em.execute<{ status: string }[]>(`select status from ${table} where id = ?`, [id]);
  return row?.status;
}

/**
 * Counts a failure on each row still PENDING and still fenced to its caller's generation: backs it off, parks it
 * at `maxFailures`, gives its lease back. Old values on the right: the n-th failure waits backoffSeconds(n).
 */
export function countFailures(em: EntityManager, table: string, rows: { id: string; generation: number }[], maxFailures: number, message: string) {
  return em.execute<{ id: string; settle_failures: number; parked: boolean }[]>(
    `update ${table} t
          set settle_failures = t.settle_failures + 1,
              next_settle_at = now() + make_interval(secs => least(3600, 5 * power(2, t.settle_failures))),
              parked_at = case when t.settle_failures + 1 >= ? then now() else null end,
              lease_until = null,
              last_error = ?
         from json_to_recordset(?::json) as held(id uuid, generation int)
        where t.id = held.id and t.status = '${WALLET_CALL_PENDING}' and t.lease_generation = held.generation
        returning t.id, t.settle_failures, t.parked_at is not null as parked`,
    [maxFailures, message, JSON.stringify(rows)],
  );
}

/** PENDING rows the sweep may finish (lease run out, back-off due, not parked), those never tried first. */
export async function dueWalletCallIds(em: EntityManager, table: string, limit: number): Promise<{ id: string }[]> {
  return em.execute<{ id: string }[]>(
    `select id from ${table}
      where status = '${WALLET_CALL_PENDING}' and parked_at is null
        and (lease_until is null or lease_until < now())
        and (next_settle_at is null or next_settle_at <= now())
      order by next_settle_at nulls first, created_at limit ?`,
    [limit],
  );
}

/**
 * Reconciliation's part of the protocol, for one table: `union all` branches
 * (the columns reconcile.ts selects) reporting parked rows (PARKED_ROW) and
 * PENDING rows no sweep has finished well after their lease and back-off
 * ran out (STALE_PENDING_ROW: the sweep is not running, or cannot reach them).
 */
export function walletCallAnomalies(table: string, ownerType: string, amountColumn: string): string {
  return `
     select 'PARKED_ROW' as kind, '${ownerType}' as owner_type, w.id::text as owner_id, null as wallet_transaction_id, w.status as owner_status,
            w.${amountColumn}::text as owner_amount, w.asset as owner_asset, null as money_amount, null as money_asset
       from ${table} w where w.status = '${WALLET_CALL_PENDING}' and w.parked_at is not null
     union all
     select 'STALE_PENDING_ROW', '${ownerType}', w.id::text, null, w.status, w.${amountColumn}::text, w.asset, null, null
       from ${table} w
      where w.status = '${WALLET_CALL_PENDING}' and w.parked_at is null
        -- database times only (created_at is service time, which a sandbox clock may have moved)
        and coalesce(greatest(w.lease_until, w.next_settle_at), w.created_at + make_interval(secs => ${LEASE_SECONDS}))
            < now() - make_interval(secs => ${STALE_AFTER_SECONDS})`;
}
