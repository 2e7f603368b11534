import type { UseCaseContext } from "../platform/use-case.ts";
import type { WebhookEndpointRow } from "./webhook-entities.ts";
import { findWebhookEndpoint } from "./get-webhook-endpoint.ts";
import { sealSecret } from "../platform/sealed-secret.ts";
import { generateSecret } from "./webhook-secret.ts";

/** Receivers get a day to switch: both secrets sign every webhook meanwhile. */
const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

/**
 * A new secret replaces the current one, which keeps signing (as a second
 * signature) for 24 hours of service time. Rotating again within the day
 * retires the oldest at once: at most two secrets are ever active.
 */
export async function rotateWebhookSecret(
  ctx: UseCaseContext,
  secretsKey: Buffer,
  input: { merchantId: string; id: string },
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  return ctx.em.transactional(async (em) => {
    const endpoint = await findWebhookEndpoint(em, input.merchantId, input.id, { lock: true });
    const now = ctx.clock.now();
    const secret = generateSecret();
    endpoint.previousSecretCiphertext = endpoint.secretCiphertext;
    endpoint.previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
    endpoint.secretCiphertext = sealSecret(secretsKey, endpoint.id, secret);
    endpoint.updatedAt = now;
    return { endpoint, secret };
  });
}
