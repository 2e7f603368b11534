import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { invalid } from "../platform/errors.ts";
import { checkDescription, checkExternalReference, checkPlanName } from "./plan-fields.ts";
import { compare, fitsStorageRoundedUp, formatAmount, MAX_INTEGER_DIGITS, MAX_WHOLE_AMOUNT } from "../platform/money.ts";
import { parseAmountField } from "../platform/amount-input.ts";
import { isCurrency } from "../platform/currencies.ts";
import { recordEvent } from "../events/record-event.ts";
import { Plan, PLAN_INTERVALS, type PlanInterval, type PlanRow } from "./entities.ts";
import { planRecord } from "./plan-record.ts";

interface CreatePlanInput {
  merchantId: string;
  externalReference?: string | undefined;
  name: string;
  description?: string | undefined;
  amount: string;
  currency: string;
  interval: string;
  intervalCount: number;
  trialDays: number;
  maximumChargeAmount?: string | undefined;
  metadata: Record<string, unknown>;
}

/**
 * The gateway validates the same rules with JSON schemas; they are checked
 * again here because internal callers reach this over gRPC directly.
 */
export async function createPlan(ctx: UseCaseContext, input: CreatePlanInput): Promise<PlanRow> {
  const amount = parseAmountField("amount", input.amount);
  const cap = input.maximumChargeAmount === undefined ? undefined : parseAmountField("maximumChargeAmount", input.maximumChargeAmount);
  if (cap && compare(cap, amount) < 0) {
    throw invalid("INVALID_REQUEST", "maximumChargeAmount: must be greater than or equal to amount");
  }
  // A free plan ("0", the spec's non-negative amount; issue 25) is accepted: its periods are zero charges with no ledger movement.
  // A charge rounds the price up to the paying asset's smallest unit and stores it in numeric(38,18): a price that
  // overflows once rounded up could never be charged, even in an asset of its own currency (issue 21).
  if (!fitsStorageRoundedUp(amount)) {
    throw invalid(
      "INVALID_REQUEST",
      `amount: must be at most ${MAX_WHOLE_AMOUNT}: a charge rounds it up to the paying asset's smallest unit and must stay below 10^${MAX_INTEGER_DIGITS}`,
    );
  }
  const name = checkPlanName(input.name);
  checkExternalReference(input.externalReference);
  checkDescription(input.description);
  if (!isCurrency(input.currency)) throw invalid("INVALID_REQUEST", `currency: ${input.currency} is not a supported currency`);
  if (!(PLAN_INTERVALS as readonly string[]).includes(input.interval)) {
    throw invalid("INVALID_REQUEST", "interval: must be one of DAY, WEEK, MONTH, YEAR");
  }
  if (!Number.isInteger(input.intervalCount) || input.intervalCount < 1 || input.intervalCount > 365) {
    throw invalid("INVALID_REQUEST", "intervalCount: must be an integer from 1 to 365");
  }
  if (!Number.isInteger(input.trialDays) || input.trialDays < 0 || input.trialDays > 365) {
    throw invalid("INVALID_REQUEST", "trialDays: must be an integer from 0 to 365");
  }

  return ctx.em.transactional(async (em) => {
    const now = ctx.clock.now();
    const plan = em.create(Plan, {
      id: randomUUID(),
      merchantId: input.merchantId,
      externalReference: input.externalReference ?? null,
      name,
      description: input.description ?? null,
      amount: formatAmount(amount),
      currency: input.currency,
      interval: input.interval as PlanInterval,
      intervalCount: input.intervalCount,
      trialDays: input.trialDays,
      maximumChargeAmount: cap ? formatAmount(cap) : null,
      metadata: input.metadata,
      status: "ACTIVE",
      archivedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    recordEvent(em, ctx.clock, { merchantId: input.merchantId, type: "plan.created", data: planRecord(plan) });
    return plan;
  });
}
