import { defineRoutes } from "../route.ts";
import { billingSettingsSchema, updateBillingSettingsBody } from "../schemas/billing-settings.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";

export const billingSettingsRoutes = defineRoutes([
  {
    method: "get",
    path: "/api/v1/settings/billing",
    operationId: "getBillingSettings",
    summary: "Your billing settings",
    description:
      "The dunning schedule, the status after the last failed retry, the advance notice, retry on top-up and the customer emails " +
      "that apply to your subscriptions. Fields you never set show the deployment's defaults.",
    tag: "Settings",
    auth: "apiKey",
    responses: { 200: { description: "The settings in force", schema: billingSettingsSchema } },
    async handler({ merchantId }, { clients }) {
      const { settings } = await clients.subscriptions.getBillingSettings({ merchantId });
      return { status: 200, body: recordOf(settings) };
    },
  },
  {
    method: "patch",
    path: "/api/v1/settings/billing",
    operationId: "updateBillingSettings",
    summary: "Change your billing settings",
    description:
      "Partial: only the fields sent change (customerEmails key by key). A bad value is a 400 naming the field. A change applies to " +
      "what is decided after it: a retry already scheduled keeps its date; the next failure is scheduled, and the period's attempt " +
      "budget (1 + retry days) counted, with the new schedule, so a PAST_DUE subscription that has already had as many attempts as " +
      "the new schedule allows goes to the (new) final status at its next retry, without being charged. Records `billing_settings.updated`.",
    tag: "Settings",
    auth: "apiKey",
    body: updateBillingSettingsBody,
    responses: { 200: { description: "The settings now in force", schema: billingSettingsSchema } },
    async handler({ merchantId, body }, { clients }) {
      const { settings } = await clients.subscriptions.updateBillingSettings({
        merchantId,
        dunningRetryDays: body.dunningRetryDays === undefined ? undefined : { days: body.dunningRetryDays },
        dunningFinalStatus: body.dunningFinalStatus,
        chargeNoticeDays: body.chargeNoticeDays,
        retryOnTopUp: body.retryOnTopUp,
        customerEmails: body.customerEmails,
      });
      return { status: 200, body: recordOf(settings) };
    },
  },
]);
