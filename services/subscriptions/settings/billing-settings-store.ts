import type { EntityManager } from "@mikro-orm/postgresql";
import type { DunningFinalStatus } from "../contract.ts";

/** Which customer emails the merchant wants sent (stored now; the emails worker reads them). */
export interface CustomerEmails {
  upcomingCharge: boolean;
  paymentFailed: boolean;
  receipt: boolean;
}

/** A merchant's row as stored: each null field is the deployment's default. */
export interface StoredBillingSettings {
  merchantId: string;
  dunningRetryDays: number[] | null;
  dunningFinalStatus: DunningFinalStatus | null;
  chargeNoticeDays: number | null;
  retryOnTopUp: boolean | null;
  customerEmails: Partial<CustomerEmails> | null;
  version: number;
  updatedAt: Date;
}

interface SettingsSqlRow {
  merchant_id: string;
  dunning_retry_days: number[] | null;
  dunning_final_status: DunningFinalStatus | null;
  charge_notice_days: number | null;
  retry_on_top_up: boolean | null;
  customer_emails: Partial<CustomerEmails> | string | null;
  version: number;
  updated_at: Date | string;
}

const fromSql = (r: SettingsSqlRow): StoredBillingSettings => ({
  merchantId: r.merchant_id,
  dunningRetryDays: r.dunning_retry_days?.map(Number) ?? null,
  dunningFinalStatus: r.dunning_final_status,
  chargeNoticeDays: r.charge_notice_days,
  retryOnTopUp: r.retry_on_top_up,
  customerEmails: typeof r.customer_emails === "string" ? JSON.parse(r.customer_emails) : r.customer_emails,
  version: Number(r.version),
  updatedAt: new Date(r.updated_at),
});

/** The stored settings of these merchants, one query (merchants that set nothing are absent). */
export async function readStoredSettings(em: EntityManager, merchantIds: readonly string[]): Promise<Map<string, StoredBillingSettings>> {
  if (merchantIds.length === 0) return new Map();
  const rows = await em.execute<SettingsSqlRow[]>(
    `select merchant_id, dunning_retry_days, dunning_final_status, charge_notice_days, retry_on_top_up, customer_emails, version, updated_at
       from merchant_billing_settings where merchant_id in (${merchantIds.map(() => "?").join(", ")})`,
    [...merchantIds],
  );
  return new Map(rows.map((r) => [r.merchant_id, fromSql(r)]));
}

/** Writes a merchant's whole row (insert or replace), inside the caller's transaction. */
export async function writeStoredSettings(em: EntityManager, s: StoredBillingSettings): Promise<void> {
  await em.execute(
    `insert into merchant_billing_settings (merchant_id, dunning_retry_days, dunning_final_status, charge_notice_days, retry_on_top_up, customer_emails, version, updated_at)
     values (?, ?::integer[], ?, ?, ?, ?::jsonb, ?, ?)
     on conflict (merchant_id) do update set dunning_retry_days = excluded.dunning_retry_days, dunning_final_status = excluded.dunning_final_status,
       charge_notice_days = excluded.charge_notice_days, retry_on_top_up = excluded.retry_on_top_up, customer_emails = excluded.customer_emails,
       version = excluded.version, updated_at = excluded.updated_at`,
    [
      s.merchantId,
      s.dunningRetryDays === null ? null : `{${s.dunningRetryDays.join(",")}}`,
      s.dunningFinalStatus,
      s.chargeNoticeDays,
      s.retryOnTopUp,
      s.customerEmails === null ? null : JSON.stringify(s.customerEmails),
      s.version,
      s.updatedAt,
    ],
  );
}

/**
 * Serialises a merchant's settings updates until the transaction ends. The
 * first update of a merchant inserts, so an advisory lock of its id, not a
 * row lock (there is no row yet to lock; once there is, this one covers it).
 */
export async function lockMerchantSettings(em: EntityManager, merchantId: string): Promise<void> {
  await em.execute("select pg_advisory_xact_lock(hashtextextended(?, 26))", [merchantId]);
}
