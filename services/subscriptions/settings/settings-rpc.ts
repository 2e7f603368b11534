import type { ServiceImpl } from "@connectrpc/connect";
import type { SubscriptionsService } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { useCaseContext } from "../../platform/rpc/use-case-context.ts";
import { withRecordJson } from "../../platform/rpc/record-json.ts";
import type { SubscriptionPorts } from "../ports.ts";
import { billingSettingsRecord, type EffectiveBillingSettings } from "./billing-settings.ts";
import { getBillingSettings } from "./get-billing-settings.ts";
import { updateBillingSettings } from "./update-billing-settings.ts";

type SettingsMethods = Pick<ServiceImpl<typeof SubscriptionsService>, "getBillingSettings" | "updateBillingSettings">;

function settingsMessage(settings: EffectiveBillingSettings) {
  const r = billingSettingsRecord(settings);
  return withRecordJson(
    {
      dunningRetryDays: r.dunningRetryDays,
      dunningFinalStatus: r.dunningFinalStatus,
      chargeNoticeDays: r.chargeNoticeDays,
      retryOnTopUp: r.retryOnTopUp,
      customerEmails: r.customerEmails,
    },
    r,
  );
}

/** The merchant's billing settings (GET/PATCH /api/v1/settings/billing): keyed by the merchant id from the API key. */
export function settingsMethods(ports: () => SubscriptionPorts): SettingsMethods {
  return {
    async getBillingSettings(req, call) {
      return { settings: settingsMessage(await getBillingSettings(useCaseContext(call), ports().policies.defaults, req.merchantId)) };
    },
    async updateBillingSettings(req, call) {
      const emails = req.customerEmails;
      const settings = await updateBillingSettings(useCaseContext(call), ports().policies, {
        merchantId: req.merchantId,
        dunningRetryDays: req.dunningRetryDays ? [...req.dunningRetryDays.days] : undefined,
        dunningFinalStatus: req.dunningFinalStatus,
        chargeNoticeDays: req.chargeNoticeDays,
        retryOnTopUp: req.retryOnTopUp,
        customerEmails: emails ? { upcomingCharge: emails.upcomingCharge, paymentFailed: emails.paymentFailed, receipt: emails.receipt } : undefined,
      });
      return { settings: settingsMessage(settings) };
    },
  };
}
