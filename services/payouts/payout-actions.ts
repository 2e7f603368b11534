import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, DomainError, invalid, notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { isOutage } from "../platform/dependency-outage.ts";
import { characterCount } from "../platform/text.ts";
import { recordEvent } from "../events/record-event.ts";
import { PAYOUT_ERRORS, PAYOUT_FAILURE_REASON_MAX_LENGTH, REJECTED_REASON } from "./contract.ts";
import { Payout, PayoutCall, type PayoutRow } from "./entities.ts";
import type { PayoutPorts } from "./payout-ports.ts";
import { payoutRecord } from "./payout-records.ts";
import { payoutMachine } from "./payout-status.ts";
import { followPayout } from "./order-refunds/follow-payout.ts";
import { failSandboxTransfer } from "./sandbox-chain-store.ts";
import { assetOf, callOf, failPayout, openCall, runPayoutCall, transferOf, tryPayoutCall } from "./payout-calls.ts";

export const payoutNotFound = (id: string) => notFound(PAYOUT_ERRORS.payoutNotFound, `payout ${id} not found`);

/** Visible payouts only: OPENING and REFUSED rows are nobody's business but the protocol's. */
const VISIBLE = { status: { $nin: ["OPENING", "REFUSED"] } } as const;

async function lockPayout(em: EntityManager, id: string, merchantId: string | undefined): Promise<PayoutRow> {
  if (!isUuid(id)) throw payoutNotFound(id);
  const where = merchantId === undefined ? { id: id.toLowerCase(), ...VISIBLE } : { id: id.toLowerCase(), merchantId, ...VISIBLE };
  const row = await em.findOne(Payout, where, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!row) throw payoutNotFound(id);
  return row;
}

/** The job's (and approval's) step: carries the payout's SUBMIT call to the chain. */
export async function submitPayout(ctx: UseCaseContext, ports: PayoutPorts, payoutId: string): Promise<void> {
  const call = await callOf(ctx.em.fork(), payoutId, "SUBMIT");
  if (!call || call.status !== "PENDING") return;
  await runPayoutCall(ctx, ports, call.id);
}

/**
 * PENDING → CANCELLED, money back. Only while nothing was handed to the
 * chain: the SUBMIT call is locked and must never have been leased (no chain
 * call can have started); it is voided, so no later lease can take it.
 * A payout whose hand-over has started is 409 INVALID_STATUS_TRANSITION.
 */
export async function cancelPayout(ctx: UseCaseContext, ports: PayoutPorts, merchantId: string, id: string): Promise<PayoutRow> {
  const { payout, reversalId } = await ctx.em.transactional(async (em) => {
    const payout = await lockPayout(em, id, merchantId);
    payoutMachine.next(payout.status, "cancelled");
    const submit = await em.findOne(PayoutCall, { payoutId: payout.id, kind: "SUBMIT" }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (submit && (submit.status !== "PENDING" || Number(submit.leaseGeneration) > 0)) {
      throw conflict("INVALID_STATUS_TRANSITION", "cannot cancel this payout: it is being handed to the chain");
    }
    if (submit) submit.status = "VOID";
    const reversal = await failPayout(em, ctx.clock, ports, payout, "cancelled", null);
    return { payout, reversalId: reversal.id };
  });
  await tryPayoutCall({ em: ctx.em.fork(), clock: ctx.clock }, ports, reversalId);
  return payout;
}

/** Operator: IN_REVIEW → handed to the chain at once (PROCESSING when the chain accepts). */
export async function approvePayout(ctx: UseCaseContext, ports: PayoutPorts, id: string): Promise<PayoutRow> {
  const submitId = await ctx.em.transactional(async (em) => {
    const payout = await lockPayout(em, id, undefined);
    if (payout.status !== "IN_REVIEW") throw conflict("INVALID_STATUS_TRANSITION", `cannot approve a payout in status ${payout.status}`);
    const existing = await em.findOne(PayoutCall, { payoutId: payout.id, kind: "SUBMIT" });
    return existing ? existing.id : openCall(em, ctx.clock.now(), payout, "SUBMIT").id;
  });
  try {
    await runPayoutCall({ em: ctx.em.fork(), clock: ctx.clock }, ports, submitId);
  } catch (err) {
    ports.logger.warn({ err, payoutId: id }, "approved payout not handed to the chain yet; the payouts sweep retries");
  }
  return ctx.em.fork().findOneOrFail(Payout, { id: id.toLowerCase() });
}

/** Operator: IN_REVIEW → FAILED with reason REJECTED, money back. A payout already approved (being handed over) cannot be. */
export async function rejectPayout(ctx: UseCaseContext, ports: PayoutPorts, id: string): Promise<PayoutRow> {
  const { payout, reversalId } = await ctx.em.transactional(async (em) => {
    const payout = await lockPayout(em, id, undefined);
    payoutMachine.next(payout.status, "rejected");
    if (await em.findOne(PayoutCall, { payoutId: payout.id, kind: "SUBMIT" }))
      throw conflict("INVALID_STATUS_TRANSITION", "cannot reject this payout: it was approved");
    const reversal = await failPayout(em, ctx.clock, ports, payout, "rejected", REJECTED_REASON);
    return { payout, reversalId: reversal.id };
  });
  await tryPayoutCall({ em: ctx.em.fork(), clock: ctx.clock }, ports, reversalId);
  return payout;
}

/** How often a PROCESSING payout is asked about at most (service time); the sandbox chain is exact whenever asked. */
const CHAIN_CHECK_SECONDS = 5;

/**
 * The sweep's chain step: PROCESSING payouts due for a check are asked
 * about (the port answers from the chain, or the sandbox's fake chain on the
 * service clock): CONFIRMED → PAID (payout.paid), FAILED → FAILED with the
 * money on its way back. Time-driven work found from Postgres: nothing in
 * Redis needs to survive for a payout to end.
 */
export async function observeChain(ctx: UseCaseContext, ports: PayoutPorts, limit = 100, onlyId?: string): Promise<{ paid: number; failed: number }> {
  if (!ports.chain) return { paid: 0, failed: 0 };
  const now = ctx.clock.now();
  const due = await ctx.em.fork().find(Payout, onlyId ? { id: onlyId, status: "PROCESSING" } : { status: "PROCESSING", nextChainCheckAt: { $lte: now } }, {
    orderBy: { nextChainCheckAt: "asc" },
    limit,
  });
  let paid = 0;
  let failed = 0;
  let broken = 0;
  for (const candidate of due) {
    try {
      const status = await ports.chain.status(ctx, transferOf(candidate, await assetOf(ports, candidate.asset)));
      const reversalId = await ctx.em.fork().transactional(async (em) => {
        const payout = await em.findOneOrFail(Payout, { id: candidate.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (payout.status !== "PROCESSING") return null;
        const at = ctx.clock.now();
        if (status?.state === "CONFIRMED") {
          payout.status = payoutMachine.next(payout.status, "confirmed");
          payout.paidAt = at;
          payout.updatedAt = at;
          payout.nextChainCheckAt = null;
          recordEvent(em, ctx.clock, { merchantId: payout.merchantId, type: "payout.paid", data: payoutRecord(payout) });
          await followPayout(em, ctx.clock, ports.claimLinks, payout, "payout_paid");
          paid += 1;
          return null;
        }
        if (status?.state === "FAILED") {
          failed += 1;
          return (await failPayout(em, ctx.clock, ports, payout, "chain_failed", status.failureReason)).id;
        }
        // Still confirming (or unknown to the chain for now, e.g. a signer that lost it: an operator looks at it): ask again later.
        if (!status) ports.logger.error({ payoutId: payout.id }, "the chain does not know a PROCESSING payout");
        payout.nextChainCheckAt = new Date(at.getTime() + CHAIN_CHECK_SECONDS * 1000);
        return null;
      });
      if (reversalId) await tryPayoutCall({ em: ctx.em.fork(), clock: ctx.clock }, ports, reversalId);
    } catch (err) {
      // One payout asked for by name (the sandbox control): its caller hears the failure.
      if (onlyId) throw err;
      broken += 1;
      // A dependency down fails every payout alike: the rest wait for the next sweep instead of one timeout each.
      if (isOutage(err)) {
        ports.logger.warn({ err }, "chain check: a dependency is down; the next sweep retries");
        break;
      }
      // This payout's own failure: it goes to the back of the queue so the others are still checked.
      ports.logger.error({ err, payoutId: candidate.id }, "chain check of a PROCESSING payout failed; retried later");
      await deferChainCheck(ctx, candidate.id);
    }
  }
  if (broken > 1) ports.logger.warn({ broken, paid, failed }, "chain check: some payouts could not be checked");
  return { paid, failed };
}

/** Pushes a payout's next chain check CHAIN_CHECK_SECONDS later (best effort: if even this fails, the row is retried as it stands). */
async function deferChainCheck(ctx: UseCaseContext, payoutId: string): Promise<void> {
  try {
    await ctx.em
      .fork()
      .nativeUpdate(Payout, { id: payoutId, status: "PROCESSING" }, { nextChainCheckAt: new Date(ctx.clock.now().getTime() + CHAIN_CHECK_SECONDS * 1000) });
  } catch {
    // The database itself is failing: the next sweep meets the same row.
  }
}

/** Sandbox: the fake chain reports a PROCESSING payout's transfer failed; the payout FAILS and its money returns. */
export async function sandboxFailPayout(ctx: UseCaseContext, ports: PayoutPorts, sandbox: boolean, id: string, reason: string): Promise<PayoutRow> {
  if (!sandbox || ports.chain?.name !== "sandbox")
    throw new DomainError("failed_precondition", "SANDBOX_DISABLED", "sandbox controls are off in this deployment");
  if (reason === "" || characterCount(reason) > PAYOUT_FAILURE_REASON_MAX_LENGTH)
    throw invalid("INVALID_REQUEST", `reason: must be 1 to ${PAYOUT_FAILURE_REASON_MAX_LENGTH} characters`);
  const payout = await ctx.em.transactional(async (em) => {
    const payout = await lockPayout(em, id, undefined);
    payoutMachine.next(payout.status, "chain_failed");
    if (payout.status !== "PROCESSING")
      throw conflict("INVALID_STATUS_TRANSITION", `only a PROCESSING payout can fail on the chain (this one is ${payout.status})`);
    await failSandboxTransfer(em, payout.id, reason);
    return payout;
  });
  await observeChain(ctx, ports, 1, payout.id);
  return ctx.em.fork().findOneOrFail(Payout, { id: payout.id });
}
