/**
 * Every RPC method of every service, classified once (test/platform/audited-methods.test.ts
 * walks the protos and fails on a method missing here, so a new RPC cannot forget its audit):
 * - an `Audited` entry: a state-changing action; each successful call that is
 *   not a step of another audited call writes one audit entry in its
 *   transaction (services/platform/audit/audit-subscriber.ts). `entity` is the
 *   entity the action creates or changes: the first one written in the call
 *   gives the entry its object id (when the request has no `objectField`) and
 *   its merchant (when the request has no merchant id).
 * - READ: answers without changing anything a merchant would audit (checks
 *   that record failures do it themselves: the member login steps).
 * - STEP: a ledger move or a sweep that only services and workers call as
 *   part of an action that is audited where it starts (a refund, a renewal,
 *   a payout); called on its own it is system work, not anyone's action.
 */
interface Audited {
  action: string;
  objectType: string;
  /** The request field that names the object (absent for creates: the created entity's id). */
  objectField?: string;
  entity?: string;
  /** The member the action is about acted themself when the call names no actor (the invite and enrolment pages, before any session). */
  selfActor?: boolean;
}

export const READ = "read" as const;
export const STEP = "step" as const;
type MethodAudit = Audited | typeof READ | typeof STEP;

const act = (action: string, entity?: string, objectField?: string): Audited => ({
  action,
  objectType: action.slice(0, action.lastIndexOf(".")),
  ...(entity ? { entity } : {}),
  ...(objectField ? { objectField } : {}),
});

/** Keyed `<Service>/<Method>` as in the proto (the service's short name). */
export const AUDITED_METHODS: Readonly<Record<string, MethodAudit>> = Object.freeze({
  "CatalogService/CreatePlan": act("plan.create", "Plan"),
  "CatalogService/GetPlan": READ,
  "CatalogService/ListPlans": READ,
  "CatalogService/UpdatePlan": act("plan.update", "Plan", "id"),
  "CatalogService/ArchivePlan": act("plan.archive", "Plan", "id"),
  "CatalogService/UnarchivePlan": act("plan.unarchive", "Plan", "id"),

  "SandboxService/GetClock": READ,
  "SandboxService/AdvanceClock": act("sandbox_clock.advance"),

  "OrdersService/CreatePaymentOrder": act("payment_order.create", "PaymentOrder"),
  "OrdersService/GetPaymentOrder": READ,
  "OrdersService/GetPaymentOrderByExternalId": READ,
  "OrdersService/GetPaymentOrderStatus": READ,
  "OrdersService/ListPaymentOrders": READ,
  "OrdersService/ReportDeposit": act("deposit.report", "PaymentOrder"),
  "OrdersService/ExpireOrders": STEP,

  "WalletService/CreateWalletUser": act("wallet_user.create", "WalletUser"),
  "WalletService/GetWalletUser": READ,
  "WalletService/FindWalletUserByEmail": READ,
  "WalletService/VerifyPassword": READ,
  "WalletService/VerifyPin": READ,
  "WalletService/ListAssets": READ,
  "WalletService/Quote": READ,
  "WalletService/ListAccounts": READ,
  "WalletService/CreditWalletUser": act("wallet_user.credit", undefined, "walletUserId"),
  "WalletService/Charge": STEP,
  "WalletService/ChargeBatch": STEP,
  "WalletService/CreditMerchant": STEP,
  "WalletService/Refund": STEP,
  "WalletService/DebitForPayout": STEP,
  "WalletService/ReversePayout": STEP,
  "WalletService/ListBalanceTransactions": READ,
  "WalletService/CheckLedger": READ,
  "WalletService/Reconcile": act("ledger.reconcile"),
  "WalletService/FreezeWalletUser": act("wallet_user.freeze", "WalletUser", "id"),
  "WalletService/UnfreezeWalletUser": act("wallet_user.unfreeze", "WalletUser", "id"),
  "WalletService/FreezeAccount": act("ledger_account.freeze", "LedgerAccount"),
  "WalletService/UnfreezeAccount": act("ledger_account.unfreeze", "LedgerAccount"),
  "WalletService/ExportBalanceTransactions": READ,
  "MerchantService/ListApiKeys": READ,
  "SubscriptionsService/GetMerchantOverview": READ,

  "EventsService/ListEvents": READ,
  "EventsService/GetEvent": READ,
  "EventsService/RedeliverEvent": act("event.redeliver", undefined, "eventId"),
  "EventsService/CreateWebhookEndpoint": act("webhook_endpoint.create", "WebhookEndpoint"),
  "EventsService/ListWebhookEndpoints": READ,
  "EventsService/GetWebhookEndpoint": READ,
  "EventsService/DeleteWebhookEndpoint": act("webhook_endpoint.delete", "WebhookEndpoint", "id"),
  "EventsService/RotateWebhookSecret": act("webhook_endpoint.rotate_secret", "WebhookEndpoint", "id"),
  "EventsService/EnableWebhookEndpoint": act("webhook_endpoint.enable", "WebhookEndpoint", "id"),
  "EventsService/DisableWebhookEndpoint": act("webhook_endpoint.disable", "WebhookEndpoint", "id"),
  "EventsService/ListWebhookDeliveries": READ,

  "PayoutsService/CreatePayoutDestination": act("payout_destination.create", "PayoutDestination"),
  "PayoutsService/GetPayoutDestination": READ,
  "PayoutsService/ListPayoutDestinations": READ,
  "PayoutsService/RemovePayoutDestination": act("payout_destination.remove", "PayoutDestination", "id"),
  "PayoutsService/ActivatePayoutDestination": act("payout_destination.activate", "PayoutDestination", "id"),
  "PayoutsService/CreatePayout": act("payout.create", "Payout"),
  "PayoutsService/GetPayout": READ,
  "PayoutsService/ListPayouts": READ,
  "PayoutsService/CancelPayout": act("payout.cancel", "Payout", "id"),
  "PayoutsService/GetPendingBalance": READ,
  "PayoutsService/AdminListPayouts": READ,
  "PayoutsService/ApprovePayout": act("payout.approve", "Payout", "id"),
  "PayoutsService/RejectPayout": act("payout.reject", "Payout", "id"),
  "PayoutsService/SandboxFailPayout": act("payout.sandbox_fail", "Payout", "id"),
  "PayoutsService/CreateOrderRefund": act("order_refund.create", "OrderRefund"),
  "PayoutsService/ListOrderRefunds": READ,
  "PayoutsService/GetRefundClaim": READ,
  "PayoutsService/ClaimOrderRefund": act("order_refund.claim", "OrderRefund"),

  "MerchantService/CreateMerchant": act("merchant.create", "Merchant"),
  "MerchantService/GetMerchant": READ,
  "MerchantService/CreateApiKey": act("api_key.create", "ApiKey"),
  "MerchantService/RevokeApiKey": act("api_key.revoke", "ApiKey", "keyId"),
  "MerchantService/AuthenticateApiKey": READ,
  "MerchantService/SetMerchantRateLimit": act("merchant.set_limits", undefined, "merchantId"),

  "MembersService/InviteMember": act("member.invite", "Member"),
  "MembersService/GetInvite": READ,
  "MembersService/AcceptInvite": { ...act("member.accept_invite", "Member"), selfActor: true },
  "MembersService/GetTotpEnrolment": READ,
  "MembersService/EnableTotp": { ...act("member.enable_totp", "Member", "memberId"), selfActor: true },
  // The login steps record their failures themselves (verify-member.ts): a success changes nothing to audit.
  "MembersService/VerifyMemberPassword": READ,
  "MembersService/VerifyMemberCode": READ,
  "MembersService/GetMember": READ,
  "MembersService/ListMembers": READ,
  "MembersService/ChangeMemberRole": act("member.change_role", "Member", "memberId"),
  "MembersService/RemoveMember": act("member.remove", "Member", "memberId"),

  "AuditService/ListAuditEntries": READ,

  "RefundsService/CreateRefund": act("refund.create", "SubscriptionRefund"),
  "RefundsService/GetRefund": READ,
  "RefundsService/ListRefunds": READ,

  "SubscriptionsService/CreateSubscription": act("subscription.create", "Subscription"),
  "SubscriptionsService/GetSubscription": READ,
  "SubscriptionsService/ListSubscriptions": READ,
  "SubscriptionsService/PauseSubscription": act("subscription.pause", "Subscription", "id"),
  "SubscriptionsService/ResumeSubscription": act("subscription.resume", "Subscription", "id"),
  "SubscriptionsService/CancelSubscription": act("subscription.cancel", "Subscription", "id"),
  "SubscriptionsService/GetAuthorization": READ,
  "SubscriptionsService/ListFundingOptions": READ,
  "SubscriptionsService/ApproveAuthorization": act("subscription.approve", "Subscription"),
  "SubscriptionsService/DeclineAuthorization": act("subscription.decline", "Subscription"),
  "SubscriptionsService/ExpireAuthorizations": STEP,
  "SubscriptionsService/CreateChangeSession": act("change_session.create", "SubscriptionChangeSession"),
  "SubscriptionsService/GetChangeSession": READ,
  "SubscriptionsService/ListChangeSessions": READ,
  "SubscriptionsService/GetChangeApproval": READ,
  "SubscriptionsService/ListChangeFundingOptions": READ,
  "SubscriptionsService/ApproveChangeSession": act("change_session.approve", "SubscriptionChangeSession"),
  "SubscriptionsService/DeclineChangeSession": act("change_session.decline", "SubscriptionChangeSession"),
  "SubscriptionsService/ListSubscriptionCharges": READ,
  "SubscriptionsService/CancelChangeSession": act("change_session.cancel", "SubscriptionChangeSession", "id"),
  "SubscriptionsService/ListCustomerSubscriptions": READ,
  "SubscriptionsService/CancelSubscriptionForCustomer": act("subscription.cancel", "Subscription", "subscriptionId"),
  "SubscriptionsService/ChangeFundingAsset": act("subscription.change_funding_asset", "Subscription", "subscriptionId"),
  "SubscriptionsService/SetFundingFallback": act("subscription.set_funding_fallback", "Subscription", "subscriptionId"),
  "SubscriptionsService/GetBillingSettings": READ,
  "SubscriptionsService/UpdateBillingSettings": act("billing_settings.update", undefined, "merchantId"),
  "SubscriptionsService/ExportCharges": READ,

  "PricingService/CreateCoupon": act("coupon.create", "Coupon"),
  "PricingService/GetCoupon": READ,
  "PricingService/ListCoupons": READ,
  "PricingService/DeleteCoupon": act("coupon.delete", "Coupon", "id"),
  "PricingService/CreatePromotionCode": act("promotion_code.create", "PromotionCode"),
  "PricingService/GetPromotionCode": READ,
  "PricingService/ListPromotionCodes": READ,
  "PricingService/ApplyDiscount": act("subscription.apply_discount", "Subscription", "subscriptionId"),
  "PricingService/RemoveDiscount": act("subscription.remove_discount", "Subscription", "subscriptionId"),
  "PricingService/GetCharge": READ,
  "PricingService/GetReceipt": READ,
  "PricingService/SetReceiptPrefix": act("receipt_settings.update", undefined, "merchantId"),
});

export function methodAudit(serviceTypeName: string, methodName: string): MethodAudit | undefined {
  return AUDITED_METHODS[`${serviceTypeName.slice(serviceTypeName.lastIndexOf(".") + 1)}/${methodName}`];
}
