import type { UseCaseContext } from "../../platform/use-case.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { settleCharge } from "./settle-charge.ts";

export const STALE_CHARGE_BATCH = 100;
/** A row whose settle failed this many times in a row is parked: reported, no longer retried by the sweep. */
export const MAX_SETTLE_FAILURES = 10;

/** Back-off after the n-th failed settle: 5 s, 10 s, 20 s … capped at one hour. */
export function settleBackoffSeconds(failures: number): number {
  return Math.min(3600, 5 * 2 ** Math.max(0, failures - 1));
}

/**
 * The sweep's part of the charge protocol: charges left PENDING by a crash
 * (lease run out) are finished with the same idempotency key, whatever they
 * pay for. Each row that fails to settle backs off (`next_settle_at`) and is
 * parked after MAX_SETTLE_FAILURES, so rows that keep failing never block
 * newer ones: the batch takes rows whose next try is due, those never tried
 * first. Parked rows are reported by reconciliation (PARKED_ROW).
 */
export async function settleStaleCharges(ctx: UseCaseContext, ports: SubscriptionPorts): Promise<number> {
  const stale = await ctx.em.execute<{ id: string }[]>(
    `select id from subscription_charges
      where status = 'PENDING' and parked_at is null
        and (lease_until is null or lease_until < now())
        and (next_settle_at is null or next_settle_at <= now())
      order by next_settle_at nulls first, created_at limit ?`,
    [STALE_CHARGE_BATCH],
  );
  let settled = 0;
  let failed = 0;
  for (const { id } of stale) {
    try {
      const res = await settleCharge({ em: ctx.em.fork(), clock: ctx.clock }, ports, id, false);
      if (res.state === "settled") settled += 1;
    } catch (err) {
      failed += 1;
      // Old values on the right: the n-th failure waits settleBackoffSeconds(n).
      const [row] = await ctx.em
        .fork()
        .execute<{ settle_failures: number; parked: boolean }[]>(
          `update subscription_charges
              set settle_failures = settle_failures + 1,
                  next_settle_at = now() + make_interval(secs => least(3600, 5 * power(2, settle_failures))),
                  parked_at = case when settle_failures + 1 >= ? then now() else null end
            where id = ? and status = 'PENDING'
            returning settle_failures, parked_at is not null as parked`,
          [MAX_SETTLE_FAILURES, id],
        )
        .catch(() => []);
      if (row) {
        const failures = Number(row.settle_failures);
        if (row.parked) ports.logger.error({ err, chargeId: id, failures }, "pending charge parked after repeated settle failures; reconciliation reports it");
        else if (failures === 1) ports.logger.warn({ err, chargeId: id }, "could not settle a pending charge; retried with back-off");
      }
    }
  }
  if (failed > 1) ports.logger.warn({ failed, settled }, "stale-charge sweep: some settles failed; retried with back-off");
  return settled;
}
