import { oldestOf, type DueWorkProbe } from "../platform/observability/due-work.ts";

/** Lag probes of the subscription sweeps (same "due" conditions as the sweeps' queries). */
export const subscriptionDueWork: DueWorkProbe[] = [
  {
    kind: "renewal",
    group: "renewals",
    oldestDue: (em, now) =>
      oldestOf(
        em,
        `select min(case when status = 'PAST_DUE' then next_retry_at else next_billing_at end) as oldest from subscriptions
          where (status in ('ACTIVE','TRIALING') and next_billing_at <= ?) or (status = 'PAST_DUE' and next_retry_at <= ?)`,
        [now, now],
      ),
  },
  {
    kind: "authorization_expiry",
    group: "scheduler",
    oldestDue: (em, now) =>
      oldestOf(em, "select min(expires_at) as oldest from subscription_authorizations where status = 'PENDING' and expires_at <= ?", [now]),
  },
  {
    kind: "plan_change",
    group: "scheduler",
    oldestDue: (em, now) =>
      oldestOf(
        em,
        `select min(greatest(cs.scheduled_for, s.next_billing_at)) as oldest
           from subscription_change_sessions cs join subscriptions s on s.id = cs.subscription_id
          where cs.status = 'SCHEDULED' and cs.scheduled_for <= ?
            and s.status in ('ACTIVE','TRIALING') and s.next_billing_at <= ? and s.next_billing_at >= cs.scheduled_for`,
        [now, now],
      ),
  },
];
