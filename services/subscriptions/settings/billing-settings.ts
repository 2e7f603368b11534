import type { EntityManager } from "@mikro-orm/postgresql";
import type { DunningFinalStatus } from "../contract.ts";
import type { BillingPolicy } from "../renewals/billing-policy.ts";

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

/** What applies to a merchant: its own values over the defaults. */
export interface EffectiveBillingSettings {
  policy: BillingPolicy;
  customerEmails: CustomerEmails;
}

export const DEFAULT_CUSTOMER_EMAILS: CustomerEmails = Object.freeze({ upcomingCharge: true, paymentFailed: true, receipt: true });

export function effectiveSettings(stored: StoredBillingSettings | undefined, defaults: BillingPolicy): EffectiveBillingSettings {
  return {
    policy: Object.freeze({
      retryDays: Object.freeze(stored?.dunningRetryDays ?? [...defaults.retryDays]),
      finalStatus: stored?.dunningFinalStatus ?? defaults.finalStatus,
      noticeDays: stored?.chargeNoticeDays ?? defaults.noticeDays,
      retryOnTopUp: stored?.retryOnTopUp ?? defaults.retryOnTopUp,
    }),
    customerEmails: { ...DEFAULT_CUSTOMER_EMAILS, ...(stored?.customerEmails ?? {}) },
  };
}

/** The merchant-facing record (REST body and the data of billing_settings.updated). */
export function billingSettingsRecord(settings: EffectiveBillingSettings) {
  return {
    object: "billing_settings" as const,
    dunningRetryDays: [...settings.policy.retryDays],
    dunningFinalStatus: settings.policy.finalStatus,
    chargeNoticeDays: settings.policy.noticeDays,
    retryOnTopUp: settings.policy.retryOnTopUp,
    customerEmails: { ...settings.customerEmails },
  };
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
