import { Migration } from "@mikro-orm/migrations";

/**
 * A fourth cancellation reason (issue 21): an immediate plan-change charge
 * that succeeds after the subscription moved on (another plan applied, or a
 * status that cannot change plan) no longer applies; its session ends
 * CANCELLED with reason SUBSCRIPTION_CHANGED and the charge is refunded.
 */
export class Migration0023ChangeNotApplied extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscription_change_sessions drop constraint subscription_change_sessions_cancellation_reason_check;
      alter table subscription_change_sessions add constraint subscription_change_sessions_cancellation_reason_check
        check (cancellation_reason in ('SUBSCRIPTION_CANCELLED','SUPERSEDED','MERCHANT_CANCELLED','SUBSCRIPTION_CHANGED'));
    `);
  }
}
