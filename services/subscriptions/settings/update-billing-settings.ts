import type { UseCaseContext } from "../../platform/use-case.ts";
import { invalid } from "../../platform/errors.ts";
import { isUuid } from "../../platform/ids.ts";
import { recordEvent } from "../../events/record-event.ts";
import { BILLING_SETTINGS_LIMITS, DUNNING_FINAL_STATUSES, type DunningFinalStatus } from "../contract.ts";
import type { BillingPolicies } from "./billing-policies.ts";
import { billingSettingsRecord, effectiveSettings, type EffectiveBillingSettings } from "./billing-settings.ts";
import { lockMerchantSettings, readStoredSettings, writeStoredSettings, type CustomerEmails } from "./billing-settings-store.ts";

/** A partial update: only the fields given change (customerEmails too is merged key by key). */
interface BillingSettingsPatch {
  merchantId: string;
  dunningRetryDays?: number[] | undefined;
  dunningFinalStatus?: string | undefined;
  chargeNoticeDays?: number | undefined;
  retryOnTopUp?: boolean | undefined;
  customerEmails?: Partial<CustomerEmails> | undefined;
}

/**
 * The merchant changes its billing settings. Validated here whatever the
 * caller (the gateway validates the same bounds first; gRPC callers get the
 * same 400s naming the field). One transaction, serialised per merchant on an
 * advisory lock of its id (a row lock could not cover the first insert):
 * the row is written whole with the given fields over the stored ones, and
 * billing_settings.updated records the settings now in force. A change
 * applies to what is decided after it commits: a retry already scheduled
 * (nextRetryAt) keeps its date; the next failure is scheduled, and the
 * attempt budget counted, with the new schedule (docs/merchant-api.md, "Dunning settings").
 * This process forgets its cached policy at once; others within their TTL.
 */
export async function updateBillingSettings(ctx: UseCaseContext, policies: BillingPolicies, patch: BillingSettingsPatch): Promise<EffectiveBillingSettings> {
  validate(patch);
  const result = await ctx.em.fork().transactional(async (em) => {
    const now = ctx.clock.now();
    // The first update of a merchant inserts; two at once serialise on the advisory lock of its id (no row lock as well: this one covers it).
    await lockMerchantSettings(em, patch.merchantId);
    const stored = (await readStoredSettings(em, [patch.merchantId])).get(patch.merchantId);
    const next = {
      merchantId: patch.merchantId,
      dunningRetryDays: patch.dunningRetryDays ?? stored?.dunningRetryDays ?? null,
      dunningFinalStatus: (patch.dunningFinalStatus as DunningFinalStatus | undefined) ?? stored?.dunningFinalStatus ?? null,
      chargeNoticeDays: patch.chargeNoticeDays ?? stored?.chargeNoticeDays ?? null,
      retryOnTopUp: patch.retryOnTopUp ?? stored?.retryOnTopUp ?? null,
      customerEmails: patch.customerEmails ? { ...(stored?.customerEmails ?? {}), ...definedOnly(patch.customerEmails) } : (stored?.customerEmails ?? null),
      version: (stored?.version ?? 0) + 1,
      updatedAt: now,
    };
    await writeStoredSettings(em, next);
    const settings = effectiveSettings(next, policies.defaults);
    recordEvent(em, ctx.clock, { merchantId: patch.merchantId, type: "billing_settings.updated", data: billingSettingsRecord(settings) });
    return settings;
  });
  policies.forget(patch.merchantId);
  return result;
}

const definedOnly = (o: Partial<CustomerEmails>): Partial<CustomerEmails> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => typeof v === "boolean")) as Partial<CustomerEmails>;

function validate(patch: BillingSettingsPatch): void {
  if (!isUuid(patch.merchantId)) throw invalid("INVALID_REQUEST", "merchantId: must be a UUID");
  const { retryDays, noticeDays } = BILLING_SETTINGS_LIMITS;
  const days = patch.dunningRetryDays;
  if (days !== undefined) {
    if (days.length < retryDays.minItems || days.length > retryDays.maxItems) {
      throw invalid("INVALID_REQUEST", `dunningRetryDays: must hold ${retryDays.minItems} to ${retryDays.maxItems} days`);
    }
    if (days.some((d) => !Number.isInteger(d) || d < retryDays.minDay || d > retryDays.maxDay)) {
      throw invalid("INVALID_REQUEST", `dunningRetryDays: each must be a whole number of days from ${retryDays.minDay} to ${retryDays.maxDay}`);
    }
    if (days.some((d, i) => i > 0 && d <= days[i - 1]!)) throw invalid("INVALID_REQUEST", "dunningRetryDays: must be strictly increasing");
  }
  if (patch.dunningFinalStatus !== undefined && !(DUNNING_FINAL_STATUSES as readonly string[]).includes(patch.dunningFinalStatus)) {
    throw invalid("INVALID_REQUEST", `dunningFinalStatus: must be one of ${DUNNING_FINAL_STATUSES.join(", ")}`);
  }
  const notice = patch.chargeNoticeDays;
  if (notice !== undefined && (!Number.isInteger(notice) || notice < noticeDays.min || notice > noticeDays.max)) {
    throw invalid("INVALID_REQUEST", `chargeNoticeDays: must be a whole number from ${noticeDays.min} to ${noticeDays.max}`);
  }
}
