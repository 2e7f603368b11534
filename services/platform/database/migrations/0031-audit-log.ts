import { Migration } from "@mikro-orm/migrations";

/**
 * The audit log (docs/decisions.md#audit-log): one row per state-changing action,
 * written in the action's own transaction.
 * - Partitioned by month on `at` (audit_entries_YYYY_MM, the naming of the
 *   other monthly partitions) so retention drops whole partitions instead of
 *   deleting rows; the default partition catches anything outside the ones
 *   made ahead (the retention sweep creates the coming months).
 * - Append-only: a trigger refuses UPDATE, DELETE and TRUNCATE on the log for
 *   every role and interface (retention drops whole partitions, which no row
 *   trigger sees; moving strays out of the default partition is allowed only
 *   to the partition maintenance, holding the table's advisory lock).
 * - Indexes: the merchant's keyset (at desc, id desc) for the API and the
 *   page, and the page's filters (action, object id, actor).
 * And the charges export's index (services/subscriptions/export-charges.ts):
 * the merchant's charges by creation time, so each batch of a year's export
 * is one range scan (without it every batch read all the merchant's charges).
 * `merchant_id` is null for operator actions that concern no merchant
 * (creating a wallet user, advancing the sandbox clock...).
 */
export class Migration0031AuditLog extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table audit_entries (
        id uuid not null default gen_random_uuid(),
        -- Milliseconds, as a JavaScript Date holds them: the keyset cursor (at, id) is then exact.
        at timestamptz not null default date_trunc('milliseconds', now()),
        merchant_id uuid,
        actor_type text not null check (actor_type in ('member', 'api_key', 'operator', 'customer')),
        actor_id text not null,
        actor_label text not null,
        action text not null,
        object_type text not null,
        object_id text,
        ip text,
        user_agent text,
        request_id text,
        primary key (id, at)
      ) partition by range (at);
      create table audit_entries_default partition of audit_entries default;
      do $$
      declare
        month date := date_trunc('month', now())::date;
      begin
        for i in 0..3 loop
          execute format(
            'create table %I partition of audit_entries for values from (%L) to (%L)',
            'audit_entries_' || to_char(month + make_interval(months => i), 'YYYY_MM'),
            month + make_interval(months => i),
            month + make_interval(months => i + 1)
          );
        end loop;
      end $$;
      create index audit_entries_merchant_idx on audit_entries (merchant_id, at desc, id desc);
      create index audit_entries_action_idx on audit_entries (merchant_id, action, at desc);
      create index audit_entries_object_idx on audit_entries (object_id);
      create index audit_entries_actor_idx on audit_entries (merchant_id, actor_id, at desc);

      create function audit_entries_refuse_change() returns trigger language plpgsql as $$
      begin
        -- The one exception: the partition maintenance (services/platform/database/monthly-partitions.ts) moving
        -- strays out of the default partition into their new month, inside its transaction holding the table's
        -- advisory lock (pg_advisory_xact_lock(hashtext('billing-partitions:audit_entries'))).
        if tg_op = 'DELETE' and tg_table_name = 'audit_entries_default' and exists (
          select 1 from pg_locks l
           where l.locktype = 'advisory' and l.pid = pg_backend_pid() and l.granted and l.objsubid = 1
             and l.classid = ((hashtext('billing-partitions:audit_entries')::bigint >> 32) & 4294967295)::text::oid
             and l.objid = (hashtext('billing-partitions:audit_entries')::bigint & 4294967295)::text::oid) then
          return old;
        end if;
        raise exception 'audit entries cannot be changed or deleted (% refused)', tg_op
          using errcode = 'insufficient_privilege';
      end $$;
      create trigger audit_entries_append_only before update or delete on audit_entries
        for each row execute function audit_entries_refuse_change();
      create trigger audit_entries_no_truncate before truncate on audit_entries
        for each statement execute function audit_entries_refuse_change();

      -- One index for the charges export (keyset on created_at, id) and the dashboard Overview (index-only: status, amount, currency).
      create index subscription_charges_merchant_created_idx on subscription_charges (merchant_id, created_at, id) include (status, amount, currency);
    `);
  }
}
