import { Migration } from "@mikro-orm/migrations";

/** Merchants may withdraw a change session: a third cancellation reason. */
export class Migration0009MerchantCancelsChange extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table subscription_change_sessions drop constraint subscription_change_sessions_cancellation_reason_check;
      alter table subscription_change_sessions add constraint subscription_change_sessions_cancellation_reason_check
        check (cancellation_reason in ('SUBSCRIPTION_CANCELLED','SUPERSEDED','MERCHANT_CANCELLED'));
    `);
  }
}
