import { randomUUID } from "node:crypto";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { billingPolicy } from "../subscriptions/renewals/billing-policy.ts";
import { effectiveSettings, readStoredSettings } from "../subscriptions/settings/billing-settings.ts";
import { fetchMerchantName, fetchPlan, fetchWalletUserById, type SubscriptionPorts } from "../subscriptions/ports.ts";
import { DomainError } from "../platform/errors.ts";
import { EMAIL_EVENT_TYPES, EMAIL_EVENTS, type EmailKind } from "./contract.ts";
import { composeEmail } from "./compose-email.ts";
import { emailViews } from "./email-views.ts";

const BATCH_SIZE = 100;
/** pg advisory lock id: one collector at a time (the unique key would absorb a second, but it would do the work twice). */
const COLLECT_LOCK = 4_026_001;

interface EventRow {
  id: string;
  merchant_id: string;
  type: string;
  data: any;
}

interface SubscriptionFacts {
  id: string;
  wallet_user_id: string;
  plan_id: string;
  status: string;
  next_retry_at: Date | null;
}

/** What one event becomes: an email to insert, a skip to count (kind), or nothing. */
type Decision = { row: Record<string, unknown> } | { skipped: EmailKind } | null;

/**
 * The emails outbox, filled from the events outbox, per batch of email-worthy
 * events not yet collected (seq order): first, outside any transaction, decide
 * per the merchant's settings (customerEmails) which become an email and render
 * each for the wallet user's address (the wallet, merchant and catalog lookups
 * are RPCs: none runs while a transaction holds the collector lock and the
 * events' row locks); then, in one transaction, lock those events still not
 * collected, insert their emails (`on conflict do nothing` on (event,
 * recipient, kind): at most one however often this runs) and mark them
 * collected. An event whose customer or plan is gone is collected and counted
 * as skipped: it cannot hold back every email after it. With SMTP off
 * (SMTP_URL unset) events are marked and no email is made: nothing piles up to
 * be mailed late.
 */
export async function collectEmails(deps: Pick<ServiceDeps, "orm" | "clock" | "config" | "logger" | "metrics">, ports: SubscriptionPorts): Promise<number> {
  const views = emailViews();
  let made = 0;
  for (;;) {
    const candidates = await deps.orm.em.fork().execute<EventRow[]>(
      `select id, merchant_id, type, data from events
        where emails_collected_at is null and type in (${EMAIL_EVENT_TYPES.map(() => "?").join(", ")})
        order by seq limit ?`,
      [...EMAIL_EVENT_TYPES, BATCH_SIZE],
    );
    if (candidates.length === 0) return made;
    const decisions = deps.config.smtpUrl ? await decide(deps, ports, views, candidates) : new Map<string, Decision>();
    const collected = await deps.orm.em.fork().transactional(async (em) => {
      const [lock] = await em.execute<{ locked: boolean }[]>("select pg_try_advisory_xact_lock(?) as locked", [COLLECT_LOCK]);
      if (!lock?.locked) return null;
      const events = await em.execute<{ id: string }[]>(
        "select id from events where id = any(string_to_array(?, ',')::uuid[]) and emails_collected_at is null for update skip locked",
        [candidates.map((e) => e.id).join(",")],
      );
      const now = deps.clock.now();
      const rows: Record<string, unknown>[] = [];
      const skipped: EmailKind[] = [];
      for (const { id } of events) {
        const decision = decisions.get(id);
        if (decision && "row" in decision) rows.push(decision.row);
        else if (decision) skipped.push(decision.skipped);
      }
      let inserted = 0;
      if (rows.length > 0) {
        const ids = await em.execute<{ id: string }[]>(
          `insert into customer_emails (id, event_id, merchant_id, recipient, kind, subject, text_body, html_body, status, attempt_count, next_attempt_at, created_at, updated_at)
           select t.id, t.event_id, t.merchant_id, t.recipient, t.kind, t.subject, t.text, t.html, 'PENDING', 0, ?, ?, ?
             from jsonb_to_recordset(?::jsonb) as t(id uuid, event_id uuid, merchant_id uuid, recipient text, kind text, subject text, text text, html text)
           on conflict (event_id, lower(recipient), kind) do nothing
           returning id`,
          [now, now, now, JSON.stringify(rows)],
        );
        inserted = ids.length;
      }
      if (events.length > 0) {
        await em.execute("update events set emails_collected_at = ? where id = any(string_to_array(?, ',')::uuid[])", [now, events.map((e) => e.id).join(",")]);
      }
      return { inserted, skipped, locked: events.length };
    });
    // Another collector holds the lock: it does this work.
    if (!collected) return made;
    made += collected.inserted;
    for (const kind of collected.skipped) deps.metrics?.emails.inc({ kind, outcome: "skipped" });
    // None left to this collector (taken meanwhile, or row-locked): stop rather than spin.
    if (candidates.length < BATCH_SIZE || collected.locked === 0) return made;
  }
}

/** Decides each event's email, reading what it needs (RPCs included) with no transaction open. */
async function decide(
  deps: Pick<ServiceDeps, "orm" | "config" | "logger">,
  ports: SubscriptionPorts,
  views: ReturnType<typeof emailViews>,
  events: EventRow[],
): Promise<Map<string, Decision>> {
  const { config } = deps;
  const em = deps.orm.em.fork();
  const subscriptionIds = [...new Set(events.map((e) => e.data?.subscriptionId).filter((id): id is string => typeof id === "string"))];
  const subs = await em.execute<SubscriptionFacts[]>(
    "select id, wallet_user_id, plan_id, status, next_retry_at from subscriptions where id = any(string_to_array(?, ',')::uuid[])",
    [subscriptionIds.join(",")],
  );
  const subById = new Map(subs.map((s) => [s.id, s]));
  const settings = await readStoredSettings(em, [...new Set(events.map((e) => e.merchant_id))]);
  const defaults = billingPolicy(config);
  const cached = memo();
  const decisions = new Map<string, Decision>();
  for (const event of events) {
    const spec = EMAIL_EVENTS[event.type]!;
    const sub = subById.get(event.data?.subscriptionId);
    if (!sub) continue;
    if (!effectiveSettings(settings.get(event.merchant_id), defaults).customerEmails[spec.setting]) {
      decisions.set(event.id, { skipped: spec.kind });
      continue;
    }
    // A receipt only for a charge that has one (a succeeded charge above 0).
    if (spec.kind === "receipt" && !event.data?.charge?.receiptUrl) continue;
    let user, merchantName, plan;
    try {
      [user, merchantName, plan] = await Promise.all([
        cached(`u/${sub.wallet_user_id}`, () => fetchWalletUserById(ports, sub.wallet_user_id)),
        cached(`m/${event.merchant_id}`, () => fetchMerchantName(ports, event.merchant_id)),
        cached(`p/${sub.plan_id}`, () => fetchPlan(ports, event.merchant_id, sub.plan_id)),
      ]);
    } catch (err) {
      if (!(err instanceof DomainError && err.kind === "not_found")) throw err;
      deps.logger.warn({ eventId: event.id, kind: spec.kind, code: err.code }, "customer email skipped: its customer or plan is not found");
      decisions.set(event.id, { skipped: spec.kind });
      continue;
    }
    if (!user.email) continue;
    const email = composeEmail(views, spec.kind, event.data, {
      merchantName,
      planName: plan.name,
      selfServiceUrl: `${config.publicBaseUrl}/wallet/subscriptions`,
      subscription: { status: sub.status, nextRetryAt: sub.next_retry_at ? new Date(sub.next_retry_at) : null },
    });
    decisions.set(event.id, {
      row: { id: randomUUID(), event_id: event.id, merchant_id: event.merchant_id, recipient: user.email, kind: spec.kind, ...email },
    });
  }
  return decisions;
}

/** One lookup per key in a batch (many events of one merchant, plan or customer). */
function memo() {
  const seen = new Map<string, Promise<any>>();
  return <T>(key: string, load: () => Promise<T>): Promise<T> => {
    if (!seen.has(key)) seen.set(key, load());
    return seen.get(key)!;
  };
}
