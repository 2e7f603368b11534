import { oldestOf, type DueWorkProbe } from "../platform/observability/due-work.ts";

/** Lag probes of the outbox relay and the webhook deliveries (an endpoint that is disabled waits on purpose: not counted). */
export const eventDueWork: DueWorkProbe[] = [
  {
    kind: "event_relay",
    group: "webhooks",
    oldestDue: (em, now) => oldestOf(em, "select min(created_at) as oldest from events where relayed_at is null and created_at <= ?", [now]),
  },
  {
    kind: "webhook_delivery",
    group: "webhooks",
    oldestDue: (em, now) =>
      oldestOf(
        em,
        `select min(d.next_attempt_at) as oldest from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
          where d.status = 'PENDING' and d.next_attempt_at <= ? and w.status = 'ENABLED'`,
        [now],
      ),
  },
];
