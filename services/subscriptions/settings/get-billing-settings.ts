import type { UseCaseContext } from "../../platform/use-case.ts";
import { invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import type { BillingPolicy } from "../renewals/billing-policy.ts";
import { effectiveSettings, readStoredSettings, type EffectiveBillingSettings } from "./billing-settings.ts";

/** What applies to the merchant now: its own settings over the deployment's defaults (a merchant that set nothing gets the defaults). */
export async function getBillingSettings(ctx: UseCaseContext, defaults: BillingPolicy, merchantId: string): Promise<EffectiveBillingSettings> {
  if (!isUuid(merchantId)) throw invalid("INVALID_REQUEST", "merchantId: must be a UUID");
  const stored = await readStoredSettings(ctx.em, [merchantId]);
  return effectiveSettings(stored.get(merchantId), defaults);
}
