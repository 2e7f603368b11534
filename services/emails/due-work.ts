import { oldestOf, type DueWorkProbe } from "../platform/observability/due-work.ts";
import { EMAIL_EVENT_TYPES } from "./contract.ts";

/** Lag probe of the emails group: the oldest email due and not sent, or the oldest email-worthy event not yet collected. */
export const emailDueWork: DueWorkProbe[] = [
  {
    kind: "customer_email",
    group: "emails",
    oldestDue: (em, now) =>
      oldestOf(
        em,
        `select least(
           (select min(next_attempt_at) from customer_emails where status in ('PENDING', 'SENDING') and next_attempt_at <= ?),
           (select min(created_at) from events where emails_collected_at is null and type in (${EMAIL_EVENT_TYPES.map(() => "?").join(", ")}) and created_at <= ?)
         ) as oldest`,
        [now, ...EMAIL_EVENT_TYPES, now],
      ),
  },
];
