import { EMAIL_EVENT_TYPES } from "../emails/contract.ts";
import { DELIVERY_STATUSES } from "../events/contract.ts";
import { sqlStatus } from "../platform/status-machine.ts";

/**
 * The retention sweep's "still needed" conditions, as SQL on a row `r` of a
 * retained table (retention-registry.ts says which table keeps which): any
 * of them true keeps the row's month. Each is asked on its own, so each can
 * use its own partial index.
 */

/** A delivery's open status, from the events contract's list (the machine itself is that domain's own). */
const PENDING_DELIVERY = sqlStatus(DELIVERY_STATUSES, "PENDING");

/** The attempt a worker is making. */
export const ATTEMPT_IN_PROGRESS = "r.outcome = 'IN_PROGRESS'";

/** The history of a delivery still being retried. */
export const ATTEMPT_OF_PENDING_DELIVERY = `exists (select 1 from webhook_deliveries d where d.id = r.delivery_id and d.event_created_at = r.event_created_at and d.status = ${PENDING_DELIVERY})`;

/** A delivery still to be made or retried. */
export const DELIVERY_PENDING = `r.status = ${PENDING_DELIVERY}`;

/** An event not yet relayed (no deliveries made). */
export const EVENT_NOT_RELAYED = "r.relayed_at is null";

/** An event whose customer emails are not yet collected. */
export const EVENT_EMAILS_NOT_COLLECTED = `r.emails_collected_at is null and r.type in (${EMAIL_EVENT_TYPES.map((t) => `'${t}'`).join(", ")})`;

/** An event being delivered. */
export const EVENT_BEING_DELIVERED = `exists (select 1 from webhook_deliveries d where d.event_id = r.id and d.event_created_at = r.created_at and d.status = ${PENDING_DELIVERY})`;
