import { amount, compare } from "../../platform/money.ts";
import type { PlanPricing } from "../ports.ts";

/** maximumChargeAmount (plan currency) is the most one charge may take. */
export function exceedsCap(plan: PlanPricing): boolean {
  return plan.maximumChargeAmount !== undefined && plan.maximumChargeAmount !== "" && compare(amount(plan.amount), amount(plan.maximumChargeAmount)) > 0;
}
