import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError } from "../errors.ts";
import { isOutage } from "../dependency-outage.ts";
import type { Logger } from "../logger.ts";
import { withoutAuditEntry } from "../audit/call-context.ts";
import type { UseCaseContext } from "../use-case.ts";
import { WALLET_CALL_PENDING } from "./wallet-call-status.ts";
import { countFailures, dueWalletCallIds, LEASE_SECONDS, takeLease, walletCallStatus } from "./wallet-call-store.ts";

// The protocol's steps its openers and reconciliation use; their statements live in the store.
export { LEASE_SECONDS, renewLeases, takeLease, walletCallAnomalies } from "./wallet-call-store.ts";

/**
 * The protocol every call that moves money in the wallet follows (a
 * subscription charge, a refund, an order credit), whatever crashes or
 * stalls where. It is written once, here; each kind of call (a WalletCall)
 * says only what its call is and what its answer changes.
 *
 *  1. Open: the row that owns the call is committed PENDING first, in the
 *     transaction that decided it (outbox), usually leased to its opener
 *     (LEASED_INSERT, or takeLease right after the insert).
 *  2. Call: only the lease holder calls the wallet, with an idempotency key
 *     made from the row's id (wallet/contract.ts ledgerKeys): a retry of a
 *     key that moved money answers that first movement and moves nothing.
 *     The lease (database time, LEASE_SECONDS) outlasts the call's timeout,
 *     and a call made long after its lease was taken (a batch's later
 *     chunks) renews it first (renewLeases), so in a healthy process one key
 *     is never in two calls at once. (A holder stalled longer than the
 *     lease between taking it and calling could still call late; the fence
 *     below keeps its answer from being recorded.)
 *  3. Settle: one transaction locks what precedes the row in its lock order,
 *     then the row (read once: the fence and the record use that read), and records the answer only if the row is still PENDING
 *     and still carries the generation the caller took (fencing): a holder
 *     stalled past its lease (GC pause, lock wait, failover) whose lease was
 *     taken over commits nothing, the newer holder's outcome is the one kept.
 *  4. Failure: a call or settle that throws counts a failure on the row
 *     (fenced too), gives the lease back and backs off (5 s doubling to one
 *     hour); after MAX_CALL_FAILURES the row is parked: the sweep leaves it,
 *     reconciliation reports it (PARKED_ROW) for an operator.
 *  5. Sweep: rows left PENDING by a crash (lease run out) or a failure
 *     (back-off due) are finished by sweepWalletCalls with the same key,
 *     those never tried first, so rows that keep failing never block newer
 *     ones. Reconciliation reports rows the sweep should have finished by
 *     now (STALE_PENDING_ROW) and parked ones (walletCallAnomalies).
 *
 * Timeouts (the chain, shortest inside): the wallet call WALLET_CALL_TIMEOUT_MS
 * (3 s) < a request's wait for a charge in flight plus that call (charges'
 * WAIT_FOR_CHARGE_MS) < the caller's RPC deadline (RPC_TIMEOUT_MS, at least
 * 4 s, 8 s by default) < the lease (30 s). A batch call (ChargeBatch, the
 * renewal engine's: no request waits on it) has WALLET_BATCH_CALL_TIMEOUT_MS
 * (15 s), still inside the lease its rows took or renewed just before the call.
 */
export const WALLET_CALL_TIMEOUT_MS = 3_000;
/**
 * A batch call's deadline. Hundreds of charges in one wallet transaction wait
 * behind the other batches that hold some of the same payers' accounts, and
 * every batch of a merchant credits its account in turn: on a loaded machine
 * a healthy batch can take seconds. Past the deadline every row of the batch
 * fails and is finished one by one by the sweep after its back-off, far
 * slower than the batch (10,000 renewals: 500 rows timed out at 3 s and took
 * 25 s more than the other 9,500 together). One lock wait is still bounded by
 * the database's statement timeout (DB_STATEMENT_TIMEOUT_MS, 5 s by default).
 * A set that calls for several merchants renews, before each call but a
 * first one made right after its leases were taken (FRESH_LEASE_MS), the
 * leases of the rows answered before too (chargeWalletBatch): it settles them
 * all after its last call.
 */
export const WALLET_BATCH_CALL_TIMEOUT_MS = 15_000;
/** A row whose call or settle failed this many times in a row is parked. */
export const MAX_CALL_FAILURES = 10;
/** Rows one sweep takes per kind. */
export const SWEEP_BATCH = 100;

/** Back-off after the n-th failure in a row: 5 s, 10 s, 20 s … capped at one hour (the SQL in recordFailure says the same). */
export function backoffSeconds(failures: number): number {
  return Math.min(3600, 5 * 2 ** Math.max(0, failures - 1));
}

/** What the settle's fence reads of a kind's row (walletCallColumns). */
export interface FencedRow {
  readonly status: string;
  readonly leaseGeneration: number;
}

/** One kind of wallet call: what it calls and what its answer changes. */
export interface WalletCall<Answer, Locked, Result, Row extends FencedRow = FencedRow> {
  /** The table of its rows (with walletCallColumns); a constant of the kind, never input. */
  readonly table: string;
  /** For logs: "charge", "refund", "credit". */
  readonly what: string;
  readonly logger: Logger;
  /** Step 2: the idempotent wallet call for the row (its key made from the id). Throws on an RPC failure. */
  call(ctx: UseCaseContext, id: string): Promise<Answer>;
  /** Step 3, first: in the settle's transaction, lock what precedes the row in the lock order. */
  lockBefore(em: EntityManager, id: string): Promise<Locked>;
  /**
   * Step 3, second: lock the row itself (`for update`, read fresh from the
   * database), or null when it does not exist. Its status and generation
   * fence the settle, and record is handed it: the row is read once.
   */
  lockRow(em: EntityManager, id: string): Promise<Row | null>;
  /** Step 3: record the answer (`tx.em` is the settle's transaction) on `row`, as lockRow locked it: PENDING and still fenced to the caller. */
  record(tx: UseCaseContext, row: Row, answer: Answer, locked: Locked): Promise<Result>;
  /** What a row that is no longer PENDING means to the caller. */
  settled(em: EntityManager, id: string): Promise<Result>;
}

export type CallOutcome<R> = { state: "in_progress" } | { state: "settled"; result: R };

/** Where a row stands for a caller holding `generation`, read under the row lock. */
type Fence = "held" | "taken_over" | "settled";

export function fenceOf(row: { status: string; leaseGeneration: number }, generation: number): Fence {
  if (row.status !== WALLET_CALL_PENDING) return "settled";
  return Number(row.leaseGeneration) === generation ? "held" : "taken_over";
}

/**
 * Columns and SQL values that write a new row already leased to its opener
 * (generation 1) in an insert: `lease_until, lease_generation` and
 * `now() + make_interval(secs => ?), 1` with LEASE_SECONDS as the parameter.
 */
export const LEASED_INSERT = {
  columns: "lease_until, lease_generation",
  values: "now() + make_interval(secs => ?), 1",
  param: LEASE_SECONDS,
  generation: 1,
} as const;

/**
 * Steps 2 and 3 for one PENDING row. `held`: the generation the caller
 * already holds (it just opened the row); undefined takes the lease here, and
 * "in_progress" is answered when another caller holds it. A failure counts
 * on the row (step 4) and is thrown as SERVICE_UNAVAILABLE: the row stays
 * PENDING and the caller's retry (the same key) or the sweep finishes it.
 */
export async function runWalletCall<A, L, R, W extends FencedRow>(
  ctx: UseCaseContext,
  kind: WalletCall<A, L, R, W>,
  id: string,
  held?: number,
): Promise<CallOutcome<R>> {
  const generation = held ?? (await takeLease(ctx.em, kind.table, id));
  if (generation === null) {
    const em = ctx.em.fork();
    const status = await walletCallStatus(em, kind.table, id);
    if (status === undefined) throw new Error(`${kind.what} ${id} does not exist`);
    return status === WALLET_CALL_PENDING ? { state: "in_progress" } : { state: "settled", result: await kind.settled(em, id) };
  }
  try {
    const answer = await kind.call(ctx, id);
    return await settleAnswer(ctx, kind, id, generation, answer);
  } catch (err) {
    await recordFailures(ctx.em.fork(), kind, [{ id, generation }], err);
    if (err instanceof DomainError) throw err;
    throw new DomainError("unavailable", "SERVICE_UNAVAILABLE", `the wallet could not complete this ${kind.what} now; it is retried, try again in a moment`, {
      cause: err,
    });
  }
}

/** Step 3, fenced: one transaction, what precedes the row locked first, then the row. */
export async function settleAnswer<A, L, R, W extends FencedRow>(
  ctx: UseCaseContext,
  kind: WalletCall<A, L, R, W>,
  id: string,
  generation: number,
  answer: A,
): Promise<CallOutcome<R>> {
  // The settle records money that moved already: no audit insert rides on (or can fail) this commit.
  return withoutAuditEntry(() =>
    ctx.em.fork().transactional(async (em): Promise<CallOutcome<R>> => {
      const locked = await kind.lockBefore(em, id);
      const row = await kind.lockRow(em, id);
      if (!row) throw new Error(`${kind.what} ${id} does not exist`);
      const fence = fenceOf(row, generation);
      if (fence === "settled") return { state: "settled", result: await kind.settled(em, id) };
      if (fence === "taken_over") {
        // A newer holder took the lease while this settle stalled; its outcome (same key) wins.
        kind.logger.warn(
          { id, what: kind.what, held: generation, current: Number(row.leaseGeneration) },
          "wallet call settle fenced off: the lease was taken over",
        );
        return { state: "in_progress" };
      }
      return { state: "settled", result: await kind.record({ em, clock: ctx.clock }, row, answer, locked) };
    }),
  );
}

/**
 * Step 4 for rows whose call or settle failed (one row, or a batch's rows
 * when its one wallet call failed): each counts a failure, gives its lease
 * back and backs off; parked after MAX_CALL_FAILURES. Fenced: a row whose
 * lease was taken over meanwhile is its new holder's to count. Best effort:
 * when the database itself is what failed, the lease runs out instead.
 */
export async function recordFailures(
  em: EntityManager,
  kind: Pick<WalletCall<unknown, unknown, unknown>, "table" | "what" | "logger">,
  rows: { id: string; generation: number }[],
  err: unknown,
): Promise<void> {
  if (rows.length === 0) return;
  const message = String((err as Error)?.message ?? err).slice(0, 500);
  const counted = await countFailures(em, kind.table, rows, MAX_CALL_FAILURES, message).catch((cause: unknown) => {
    kind.logger.warn({ err: cause, what: kind.what, rows: rows.length }, "could not count a wallet-call failure; the lease runs out instead");
    return [];
  });
  for (const row of counted) {
    const failures = Number(row.settle_failures);
    if (row.parked) kind.logger.error({ err, id: row.id, what: kind.what, failures }, "wallet call parked after repeated failures; reconciliation reports it");
    else if (failures === 1) kind.logger.warn({ err, id: row.id, what: kind.what }, "wallet call failed; retried with back-off");
  }
}

/**
 * Step 5: PENDING rows whose lease ran out and whose next try is due, those
 * never tried first, each finished with its own key. Returns how many were
 * settled and how many failed again (their failure is counted on the row).
 */
export async function sweepWalletCalls<A, L, R, W extends FencedRow>(
  ctx: UseCaseContext,
  kind: WalletCall<A, L, R, W>,
  limit = SWEEP_BATCH,
): Promise<{ settled: number; failed: number }> {
  const due = await dueWalletCallIds(ctx.em.fork(), kind.table, limit);
  let settled = 0;
  let failed = 0;
  for (const { id } of due) {
    try {
      const res = await runWalletCall({ em: ctx.em.fork(), clock: ctx.clock }, kind, id);
      if (res.state === "settled") settled += 1;
    } catch (err) {
      failed += 1;
      // A dependency down fails every row alike: the rest wait for the next sweep instead of one timeout each.
      if (isOutage(err)) break;
    }
  }
  if (failed > 1) kind.logger.warn({ what: kind.what, failed, settled }, "wallet-call sweep: some calls failed; retried with back-off");
  return { settled, failed };
}
