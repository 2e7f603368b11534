import { Migration } from "@mikro-orm/migrations";

/**
 * Reconciliation reports a SUCCEEDED period charge whose subscription never
 * billed that period (CHARGE_WITHOUT_BILLED_PERIOD, issue 21): the recorded
 * kinds' check allows it. The list also names STALE_PENDING_ROW, which the
 * wallet-call protocol work adds in its own migration with this same list, so
 * the two leave one constraint whichever runs last.
 */
export class Migration0023ChargeWithoutBilledPeriod extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table reconciliation_anomalies drop constraint if exists reconciliation_anomalies_kind_check;
      alter table reconciliation_anomalies add constraint reconciliation_anomalies_kind_check check (kind in (
        'MONEY_WITHOUT_SUCCEEDED_OWNER','SUCCEEDED_OWNER_WITHOUT_MONEY','AMOUNT_MISMATCH','PARKED_ROW',
        'STALE_PENDING_ROW','CHARGE_WITHOUT_BILLED_PERIOD'));
    `);
  }
}
