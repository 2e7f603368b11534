import { ApiKey, Merchant } from "./merchants/entities.ts";
import { Plan } from "./catalog/entities.ts";
import { Event } from "./events/entities.ts";
import { webhookEntities } from "./events/webhook-entities.ts";
import { walletEntities } from "./wallet/entities.ts";
import { subscriptionEntities } from "./subscriptions/entities.ts";
import { orderEntities } from "./orders/entities.ts";
import { changeSessionEntities } from "./subscriptions/change-sessions/change-session-entities.ts";
import { refundEntities } from "./subscriptions/refunds/refund-entities.ts";
import { payoutEntities } from "./payouts/entities.ts";
import { memberEntities } from "./merchants/members/entities.ts";
import { pricingEntities } from "./subscriptions/pricing/pricing-entities.ts";

/** Every entity of every domain; one ORM instance knows them all. */
export const entities = [
  Merchant,
  ApiKey,
  Plan,
  Event,
  ...webhookEntities,
  ...walletEntities,
  ...subscriptionEntities,
  ...orderEntities,
  ...changeSessionEntities,
  ...refundEntities,
  ...payoutEntities,
  ...pricingEntities,
  ...memberEntities,
];
