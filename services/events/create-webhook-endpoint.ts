import { randomUUID } from "node:crypto";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, invalid } from "../platform/errors.ts";
import { WEBHOOK_MAX_IN_FLIGHT_DEFAULT, WEBHOOK_MAX_IN_FLIGHT_LIMIT } from "./contract.ts";
import { WebhookEndpoint, type WebhookEndpointRow } from "./webhook-entities.ts";
import { checkDescription, checkEnabledEvents, checkWebhookUrl } from "./webhook-endpoint-input.ts";
import { sealSecret } from "../platform/sealed-secret.ts";
import { generateSecret } from "./webhook-secret.ts";
import { lockMerchantForEndpoints } from "./webhook-endpoint-store.ts";

/** As many as the big providers allow; more is a sign of a leak, not a need. */
const MAX_ENDPOINTS_PER_MERCHANT = 16;

interface CreateWebhookEndpointInput {
  merchantId: string;
  url: string;
  enabledEvents: readonly string[];
  description?: string | undefined;
  /** One request at a time, in event order (default false). */
  ordered?: boolean | undefined;
  /** Requests in flight at once, 1 to WEBHOOK_MAX_IN_FLIGHT_LIMIT (default WEBHOOK_MAX_IN_FLIGHT_DEFAULT). */
  maxInFlight?: number | undefined;
}

/** Returns the secret in clear: this is the only time it is shown (with rotation's). */
export async function createWebhookEndpoint(
  ctx: UseCaseContext,
  secretsKey: Buffer,
  input: CreateWebhookEndpointInput,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const url = checkWebhookUrl(input.url);
  const enabledEvents = checkEnabledEvents(input.enabledEvents);
  const description = checkDescription(input.description);
  const maxInFlight = input.maxInFlight ?? WEBHOOK_MAX_IN_FLIGHT_DEFAULT;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > WEBHOOK_MAX_IN_FLIGHT_LIMIT) {
    throw invalid("INVALID_REQUEST", `maxInFlight: must be an integer from 1 to ${WEBHOOK_MAX_IN_FLIGHT_LIMIT}`);
  }
  return ctx.em.transactional(async (em) => {
    // Serialise concurrent creations per merchant so the limit holds.
    await lockMerchantForEndpoints(em, input.merchantId);
    const count = await em.count(WebhookEndpoint, { merchantId: input.merchantId, status: { $ne: "DELETED" } });
    if (count >= MAX_ENDPOINTS_PER_MERCHANT) {
      throw conflict("WEBHOOK_ENDPOINT_LIMIT", `a merchant can have at most ${MAX_ENDPOINTS_PER_MERCHANT} webhook endpoints`);
    }
    const id = randomUUID();
    const secret = generateSecret();
    const now = ctx.clock.now();
    const endpoint = em.create(WebhookEndpoint, {
      id,
      merchantId: input.merchantId,
      url,
      description,
      enabledEvents,
      status: "ENABLED",
      disabledReason: null,
      disabledAt: null,
      secretCiphertext: sealSecret(secretsKey, id, secret),
      previousSecretCiphertext: null,
      previousSecretExpiresAt: null,
      maxInFlight,
      ordered: input.ordered ?? false,
      createdAt: now,
      updatedAt: now,
    });
    return { endpoint, secret };
  });
}
