import { Migration } from "@mikro-orm/migrations";

/**
 * Customer emails (issue 26), the `emails` worker group's outbox:
 * - events gain emails_collected_at: the collector (services/emails) marks
 *   each email-worthy event once it has made its rows (its own marker, so it
 *   never waits on the webhook relay); events already recorded are marked now,
 *   so a deploy never mails the past;
 * - customer_emails holds each email rendered (subject, text, HTML) with its
 *   send state; the unique key (event, recipient, kind) makes it at most one
 *   per event and recipient whoever collects. PARKED: refused for good (SMTP
 *   5xx) or out of attempts; kept with the last error for the operator.
 */
export class Migration0029CustomerEmails extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table events add column emails_collected_at timestamptz;
      update events set emails_collected_at = created_at
        where type in ('subscription.charge_upcoming', 'subscription.charge_at_risk', 'subscription.charge_failed', 'subscription.charge_succeeded');
      create index events_emails_uncollected_idx on events (seq)
        where emails_collected_at is null
          and type in ('subscription.charge_upcoming', 'subscription.charge_at_risk', 'subscription.charge_failed', 'subscription.charge_succeeded');

      create table customer_emails (
        id uuid primary key,
        event_id uuid not null references events(id),
        merchant_id uuid not null references merchants(id),
        recipient varchar(254) not null,
        kind varchar(32) not null check (kind in ('upcoming_charge', 'charge_at_risk', 'payment_failed', 'receipt')),
        subject text not null,
        text_body text not null,
        html_body text not null,
        status varchar(16) not null default 'PENDING' check (status in ('PENDING', 'SENDING', 'SENT', 'PARKED')),
        attempt_count int not null default 0,
        next_attempt_at timestamptz not null,
        last_error text,
        sent_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create unique index customer_emails_once_idx on customer_emails (event_id, lower(recipient), kind);
      create index customer_emails_due_idx on customer_emails (next_attempt_at) where status in ('PENDING', 'SENDING');
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop table customer_emails;
      drop index events_emails_uncollected_idx;
      alter table events drop column emails_collected_at;
    `);
  }
}
