import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, invalid, notFound } from "../platform/errors.ts";
import { add, amount, equals, fitsStorage, formatAtScale, fractionDigits } from "../platform/money.ts";
import { OrderPayment } from "./entities.ts";
import { ADDRESS_MAX, CONFIRMATIONS_MAX, parsePositiveAmount, TX_ID_MAX } from "./order-input.ts";
import { OPEN_STATUSES } from "./order-status.ts";
import { lockOrder, type OrderWithPayments } from "./order-store.ts";
import { expireInPlace, reconcileOrder } from "./reconcile-order.ts";
import { canonicalDepositAddress } from "./addresses/canonical-address.ts";

interface ReportDepositInput {
  address: string;
  asset: string;
  amount: string;
  txId: string;
  /** Absent: 0 (seen, not yet in a block). */
  confirmations?: number | undefined;
}

export type DepositOutcome = "RECORDED" | "UPDATED" | "DUPLICATE";

interface DepositResult extends OrderWithPayments {
  outcome: DepositOutcome;
  creditIds: string[];
}

const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * The chain watcher's one entry point: a transfer of `amount` to `address`
 * in transaction `txId`, with its confirmations so far. A transaction counts
 * once per address: reported again it only raises its confirmations (never
 * lowers them); reported with another amount it is refused as a conflict.
 * The order row is locked for the whole change, so concurrent reports of one
 * order apply one after the other.
 */
export async function reportDeposit(ctx: UseCaseContext, input: ReportDepositInput): Promise<DepositResult> {
  if (!input.address || input.address.length > ADDRESS_MAX || !PRINTABLE.test(input.address)) {
    throw invalid("INVALID_REQUEST", `address: must be 1 to ${ADDRESS_MAX} printable characters`);
  }
  if (!input.txId || input.txId.length > TX_ID_MAX || !PRINTABLE.test(input.txId)) {
    throw invalid("INVALID_REQUEST", `txId: must be 1 to ${TX_ID_MAX} printable characters`);
  }
  const confirmations = input.confirmations ?? 0;
  if (!Number.isInteger(confirmations) || confirmations < 0 || confirmations > CONFIRMATIONS_MAX) {
    throw invalid("INVALID_REQUEST", `confirmations: must be an integer from 0 to ${CONFIRMATIONS_MAX}`);
  }
  const value = parsePositiveAmount("amount", input.amount);

  return ctx.em.transactional(async (em) => {
    const state = await lockOrder(em, { address: canonicalDepositAddress(input.address) });
    if (!state) throw notFound("DEPOSIT_ADDRESS_NOT_FOUND", `address: no payment order has the address ${input.address}`);
    const { order, payments } = state;
    if (order.asset !== input.asset) {
      throw invalid("DEPOSIT_ASSET_MISMATCH", `asset: address ${input.address} receives ${order.asset}, not ${input.asset}`);
    }
    if (fractionDigits(value) > order.decimals) {
      throw invalid("INVALID_REQUEST", `amount: ${order.asset} has ${order.decimals} decimals; at most ${order.decimals} fraction digits are allowed`);
    }
    const now = ctx.clock.now();
    const creditIds: string[] = [];
    // The expiry job may not have run yet: an order is expired the moment its time is up.
    if (OPEN_STATUSES.includes(order.status) && now.getTime() >= order.expiresAt.getTime()) {
      creditIds.push(...expireInPlace(em, ctx.clock, state).creditIds);
    }

    const known = payments.find((p) => p.txId === input.txId);
    if (known) {
      if (!equals(known.amount, value)) {
        throw conflict("DEPOSIT_CONFLICT", `txId: ${input.txId} was reported before with amount ${formatAtScale(known.amount, order.decimals)}`);
      }
      if (confirmations <= known.confirmations) return { ...state, outcome: "DUPLICATE" as const, creditIds };
      known.confirmations = confirmations;
      known.updatedAt = now;
      creditIds.push(...reconcileOrder(em, ctx.clock, state).creditIds);
      return { ...state, outcome: "UPDATED" as const, creditIds };
    }

    // The order's totals (and the credit) are numeric(38,18) too: refuse what they cannot hold rather than fail.
    if (!fitsStorage(payments.reduce((sum, p) => add(sum, amount(p.amount)), value))) {
      throw invalid("INVALID_REQUEST", `amount: the transfers to ${order.address} would total more than amounts can hold (under 10^20)`);
    }
    const payment = em.create(OrderPayment, {
      id: randomUUID(),
      orderId: order.id,
      merchantId: order.merchantId,
      asset: order.asset,
      network: order.network,
      address: order.address,
      txId: input.txId,
      amount: formatAtScale(value, order.decimals),
      confirmations,
      late: order.status === "EXPIRED" || now.getTime() >= order.expiresAt.getTime(),
      creditId: null,
      seenAt: now,
      updatedAt: now,
    });
    payments.push(payment);
    creditIds.push(...reconcileOrder(em, ctx.clock, state, payment).creditIds);
    return { ...state, outcome: "RECORDED" as const, creditIds };
  });
}
