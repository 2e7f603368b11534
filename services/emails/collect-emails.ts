import { readByIndexesOnly } from "../platform/database/index-only-reads.ts";
import { randomUUID } from "node:crypto";
import type { ServiceDeps } from "../platform/service-deps.ts";
import { billingPolicy } from "../subscriptions/renewals/billing-policy.ts";
import { effectiveSettings, readStoredSettings } from "../subscriptions/settings/billing-settings.ts";
import { fetchMerchantName, fetchPlan, fetchWalletUserById, type SubscriptionPorts } from "../subscriptions/ports.ts";
import { DomainError } from "../platform/errors.ts";
import { EMAIL_EVENTS, type EmailKind } from "./contract.ts";
import { composeEmail } from "./compose-email.ts";
import { emailViews } from "./email-views.ts";
import {
  insertEmails,
  lockUncollectedEvents,
  markEventsCollected,
  subscriptionFacts,
  tryTakeCollectorTurn,
  uncollectedEmailEvents,
  type EmailEvent,
} from "./email-store.ts";

const BATCH_SIZE = 100;
/** pg advisory lock id: one collector at a time (the unique key would absorb a second, but it would do the work twice). */
const COLLECT_LOCK = 4_026_001;

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
    // In a transaction of its own only for readByIndexesOnly: the rows still to collect, by the partial index's order.
    const candidates = await deps.orm.em.fork().transactional(async (em) => {
      await readByIndexesOnly(em);
      return uncollectedEmailEvents(em, BATCH_SIZE);
    });
    if (candidates.length === 0) return made;
    const decisions = deps.config.smtpUrl ? await decide(deps, ports, views, candidates) : new Map<string, Decision>();
    const collected = await deps.orm.em.fork().transactional(async (em) => {
      if (!(await tryTakeCollectorTurn(em, COLLECT_LOCK))) return null;
      await readByIndexesOnly(em);
      const events = await lockUncollectedEvents(em, candidates);
      const now = deps.clock.now();
      const rows: Record<string, unknown>[] = [];
      const skipped: EmailKind[] = [];
      for (const { id } of events) {
        const decision = decisions.get(id);
        if (decision && "row" in decision) rows.push(decision.row);
        else if (decision) skipped.push(decision.skipped);
      }
      const inserted = rows.length > 0 ? await insertEmails(em, rows, now) : 0;
      if (events.length > 0) {
        await markEventsCollected(em, events);
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
  events: EmailEvent[],
): Promise<Map<string, Decision>> {
  const { config } = deps;
  const em = deps.orm.em.fork();
  const subscriptionIds = [...new Set(events.map((e) => e.data?.subscriptionId).filter((id): id is string => typeof id === "string"))];
  const subs = await subscriptionFacts(em, subscriptionIds);
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
