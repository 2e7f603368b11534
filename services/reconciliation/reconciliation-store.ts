import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { AnomalyKind, OwnerType } from "./contract.ts";
import { LEDGER_KEY_PREFIXES as K, ledgerKeyMatchesSql, ledgerKeyOwnerSql, ledgerKeyOwnerUuidSql } from "../wallet/contract.ts";
import { walletCallAnomalies } from "../platform/wallet-calls/wallet-call.ts";
import { WALLET_CALL_PENDING } from "../platform/wallet-calls/wallet-call-status.ts";
import { sqlStatus } from "../platform/status-machine.ts";
import { CHARGE_STATUSES } from "../subscriptions/contract.ts";
import { REFUND_STATUSES } from "../subscriptions/refunds/contract.ts";
import { CREDIT_STATUSES } from "../orders/contract.ts";
import { ORDER_REFUND_STATUSES, PAYOUT_STATUSES } from "../payouts/contract.ts";

/**
 * The reconciliation's checks (reconcile.ts runs them and records what they
 * find): it reads every domain's tables, so its statements live here, on the
 * caller's entity manager.
 */

// The statuses the checks name, checked when the module loads against each
// table's statuses: the contracts' lists (each domain's machine is built on
// its list and is that domain's own), the credits' list, the protocol's PENDING.
const CHARGE_SUCCEEDED = sqlStatus(CHARGE_STATUSES, "SUCCEEDED");
const CHARGE_FAILED = sqlStatus(CHARGE_STATUSES, "FAILED");
const REFUND_SUCCEEDED = sqlStatus(REFUND_STATUSES, "SUCCEEDED");
const REFUND_FAILED = sqlStatus(REFUND_STATUSES, "FAILED");
const CREDIT_DONE = sqlStatus(CREDIT_STATUSES, "DONE");
const PAYOUT_REFUSED = sqlStatus(PAYOUT_STATUSES, "REFUSED");
const PAYOUT_PAID = sqlStatus(PAYOUT_STATUSES, "PAID");
const PAYOUT_FAILED = sqlStatus(PAYOUT_STATUSES, "FAILED");
const PAYOUT_CANCELLED = sqlStatus(PAYOUT_STATUSES, "CANCELLED");
const PAYOUT_EXPIRED = sqlStatus(PAYOUT_STATUSES, "EXPIRED");
const ORDER_REFUND_REFUSED = sqlStatus(ORDER_REFUND_STATUSES, "REFUSED");

const UUID = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
/** SQL: a text column as a uuid, or null when it holds none (an anomaly's owner id may be a key or an asset). */
const uuidOrNull = (column: string) => `case when ${column} ~ '${UUID}' then ${column}::uuid end`;

/**
 * Gathers what an incremental run checks since `since` (reconciliation-window-store.ts
 * says why it is enough) into temporary tables of the caller's transaction,
 * dropped at its end, in its snapshot:
 *  - reconcile_money: money created since, the money of every recorded
 *    anomaly, then the money of every owner below and of every payout and
 *    order refund (few rows: checked in full), by the ledger's unique key;
 *  - reconcile_refunds: created since, named by new money, or of a recorded anomaly;
 *  - reconcile_charges: created since, named by new money, of those refunds
 *    (their refunded total: a refund parked long ago can still settle), or of
 *    a recorded anomaly;
 *  - reconcile_credits: created since, named by new money, or of a recorded anomaly.
 * Each is analyzed, so the checks join them to the big tables with sizes
 * PostgreSQL knows (without statistics any `created_at >= $1` reads as a third
 * of a table, and it planned hash joins over whole tables); and nothing of
 * them passes through this process (id lists held in memory raised the
 * services' and workers' resident memory by 200 MiB in the soak).
 * Returns the window's start.
 */
export async function gatherTouchedRows(em: EntityManager, since: string): Promise<TouchedRows> {
  const statements = [
    "create temp table reconcile_new_money (id uuid, idempotency_key varchar(200)) on commit drop",
    `insert into reconcile_new_money
       select t.id, t.idempotency_key from ledger_transactions t where t.created_at >= ?::timestamptz
       union
       select t.id, t.idempotency_key from reconciliation_anomalies a join ledger_transactions t on t.id = ${uuidOrNull("a.wallet_transaction_id")}`,
    "analyze reconcile_new_money",
    "create temp table reconcile_refunds (id uuid) on commit drop",
    `insert into reconcile_refunds
       select id from (
         select r.id from subscription_refunds r where r.created_at >= ?::timestamptz
         union select ${ledgerKeyOwnerUuidSql("m.idempotency_key", K.refund)} from reconcile_new_money m
         union select ${uuidOrNull("a.owner_id")} from reconciliation_anomalies a where a.owner_type = 'refund') r
        where id is not null`,
    "analyze reconcile_refunds",
    "create temp table reconcile_charges (id uuid) on commit drop",
    `insert into reconcile_charges
       select id from (
         select c.id from subscription_charges c where c.created_at >= ?::timestamptz
         union select r.charge_id from subscription_refunds r join reconcile_refunds t on t.id = r.id
         union select ${ledgerKeyOwnerUuidSql("m.idempotency_key", K.subscriptionCharge)} from reconcile_new_money m
         union select ${uuidOrNull("a.owner_id")} from reconciliation_anomalies a where a.owner_type = 'subscription_charge') c
        where id is not null`,
    "analyze reconcile_charges",
    "create temp table reconcile_credits (id uuid, idempotency_key varchar(200)) on commit drop",
    `insert into reconcile_credits
       select o.id, o.idempotency_key from payment_order_credits o where o.created_at >= ?::timestamptz
       union select o.id, o.idempotency_key from reconcile_new_money m join payment_order_credits o on o.idempotency_key = m.idempotency_key
       union select o.id, o.idempotency_key from reconciliation_anomalies a join payment_order_credits o on o.id = ${uuidOrNull("a.owner_id")}
        where a.owner_type = 'order_credit'`,
    "analyze reconcile_credits",
    "create temp table reconcile_money (id uuid) on commit drop",
    `insert into reconcile_money
       select id from reconcile_new_money
       union select t.id from reconcile_charges c join ledger_transactions t on t.idempotency_key = '${K.subscriptionCharge}' || c.id::text
       union select t.id from reconcile_refunds r join ledger_transactions t on t.idempotency_key = '${K.refund}' || r.id::text
       union select t.id from reconcile_credits o join ledger_transactions t on t.idempotency_key = o.idempotency_key
       union select t.id from payouts p join ledger_transactions t
               on t.idempotency_key in ('${K.payoutDebit}' || p.id::text, '${K.payoutReversal}' || p.id::text)
       union select t.id from order_refunds r join ledger_transactions t
               on t.idempotency_key in ('${K.orderRefund}' || r.id::text, '${K.orderRefundReturn}' || r.id::text)`,
    "analyze reconcile_money",
  ];
  for (const sql of statements) await em.execute(sql, sql.includes("?") ? [since] : []);
  return { since };
}

/** An incremental run's window, once its rows are gathered (gatherTouchedRows). */
export interface TouchedRows {
  /** The window's first created_at (PostgreSQL's text). */
  readonly since: string;
}

/**
 * How the checks' statement is restricted: `null` (a full pass) reads all
 * history; otherwise the statement opens with the touched lists, each check
 * reads its money from `scoped_money` and keeps only owners on the lists.
 * Payouts, order refunds and the PAYOUTS account are checked in full either way.
 */
interface Scope {
  /** CTEs that open the statement's `with` (each followed by a comma), or "". */
  readonly prelude: string;
  readonly params: unknown[];
  /** Where the checks read money from. */
  readonly money: string;
  /** SQL conditions: the owner id (a uuid column) is one this run checks. */
  readonly charge: (id: string) => string;
  readonly refund: (id: string) => string;
  readonly credit: (id: string) => string;
  /** SQL condition: the payout.paid event `e` is one this run counts (its payout has one in the window, or was reported). */
  readonly paidEvent: (e: string) => string;
}

const FULL: Scope = {
  prelude: "",
  params: [],
  money: "ledger_transactions",
  charge: () => "true",
  refund: () => "true",
  credit: () => "true",
  paidEvent: () => "true",
};

function scope(touched: TouchedRows | null): Scope {
  if (touched === null) return FULL;
  return {
    prelude: `scope as (select ?::timestamptz as since),
     scoped_money as materialized (select t.* from ledger_transactions t join reconcile_money m on m.id = t.id),`,
    params: [touched.since],
    money: "scoped_money",
    charge: (id) => `${id} in (select id from reconcile_charges)`,
    refund: (id) => `${id} in (select id from reconcile_refunds)`,
    credit: (id) => `${id} in (select id from reconcile_credits)`,
    paidEvent: (e) => `${e}.data->>'id' in (
         select w.data->>'id' from events w where w.type = 'payout.paid' and w.created_at >= (select since from scope)
         union select a.owner_id from reconciliation_anomalies a where a.kind = 'PAYOUT_PAID_TWICE' and a.owner_type = 'payout')`,
  };
}

/** How many wallet transactions and owning rows the checks compare. */
export async function comparedCounts(em: EntityManager, touched: TouchedRows | null): Promise<{ transactions: number; charges: number; credits: number }> {
  const sc = scope(touched);
  const [counts] = await em.execute<{ transactions: number; charges: number; credits: number }[]>(
    `${sc.prelude ? `with ${sc.prelude.replace(/,\s*$/, "")}` : ""}
     select (select count(*)::int from ${sc.money}
              where idempotency_key like '${K.subscriptionCharge}%' or idempotency_key like '${K.paymentOrder}%' or idempotency_key like '${K.refund}%'
                 or idempotency_key like '${K.payoutDebit}%' or idempotency_key like '${K.payoutReversal}%'
                 or idempotency_key like '${K.orderRefund}%') as transactions,
            (select count(*)::int from subscription_charges c where (c.status = ${CHARGE_SUCCEEDED} or c.parked_at is not null) and ${sc.charge("c.id")})
              + (select count(*)::int from subscription_refunds r where r.status = ${REFUND_SUCCEEDED} and ${sc.refund("r.id")})
              + (select count(*)::int from payouts where debited_at is not null) as charges,
            (select count(*)::int from payment_order_credits o where (o.status = ${CREDIT_DONE} or o.parked_at is not null) and ${sc.credit("o.id")}) as credits`,
    sc.params,
  );
  return counts!;
}

interface MismatchRow {
  kind: AnomalyKind;
  owner_type: OwnerType;
  owner_id: string;
  wallet_transaction_id: string | null;
  owner_status: string | null;
  owner_amount: string | null;
  owner_asset: string | null;
  money_amount: string | null;
  money_asset: string | null;
}

/**
 * Every disagreement between the money and the rows that should own it, in
 * one statement (one snapshot), ordered by kind, owner type and owner.
 * Amounts are compared as numerics in SQL and come back as decimal strings.
 */
export async function moneyOwnerMismatches(em: EntityManager, touched: TouchedRows | null): Promise<MismatchRow[]> {
  const sc = scope(touched);
  return em.execute<MismatchRow[]>(
    `with ${sc.prelude}
     charge_money as (
       select t.id, t.asset, t.amount::text as amount, ${ledgerKeyOwnerSql("t.idempotency_key", K.subscriptionCharge)} as owner_id, ${ledgerKeyOwnerUuidSql("t.idempotency_key", K.subscriptionCharge)} as owner_uuid
         from ${sc.money} t where t.idempotency_key like '${K.subscriptionCharge}%'
     ), credit_money as (
       select t.id, t.asset, t.amount::text as amount, t.idempotency_key from ${sc.money} t where t.idempotency_key like '${K.paymentOrder}%'
     ), payout_money as (
       select t.id, t.asset, t.amount::text as amount, ${ledgerKeyOwnerSql("t.idempotency_key", K.payoutDebit)} as owner_id, ${ledgerKeyOwnerUuidSql("t.idempotency_key", K.payoutDebit)} as owner_uuid
         from ${sc.money} t where t.idempotency_key like '${K.payoutDebit}%'
     ), reversal_money as (
       select t.id, t.asset, t.amount::text as amount, ${ledgerKeyOwnerSql("t.idempotency_key", K.payoutReversal)} as owner_id, ${ledgerKeyOwnerUuidSql("t.idempotency_key", K.payoutReversal)} as owner_uuid
         from ${sc.money} t where t.idempotency_key like '${K.payoutReversal}%'
     ), order_refund_money as (
       -- order-refund-<uuid> (the reservation) only: order-refund-return-<uuid> is the money back
       select t.id, t.asset, t.amount::text as amount, ${ledgerKeyOwnerSql("t.idempotency_key", K.orderRefund)} as owner_id, ${ledgerKeyOwnerUuidSql("t.idempotency_key", K.orderRefund)} as owner_uuid
         from ${sc.money} t where ${ledgerKeyMatchesSql("t.idempotency_key", K.orderRefund)}
     ), order_refund_return_money as (
       select t.id, t.asset, t.amount::text as amount, ${ledgerKeyOwnerSql("t.idempotency_key", K.orderRefundReturn)} as owner_id, ${ledgerKeyOwnerUuidSql("t.idempotency_key", K.orderRefundReturn)} as owner_uuid
         from ${sc.money} t where t.idempotency_key like '${K.orderRefundReturn}%'
     ), refund_money as (
       select t.id, t.asset, t.amount::text as amount, ${ledgerKeyOwnerSql("t.idempotency_key", K.refund)} as owner_id, ${ledgerKeyOwnerUuidSql("t.idempotency_key", K.refund)} as owner_uuid
         from ${sc.money} t where t.idempotency_key like '${K.refund}%'
     )
     -- money for a charge whose row is missing or did not succeed
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER' as kind, 'subscription_charge' as owner_type, m.owner_id, m.id::text as wallet_transaction_id,
            c.status as owner_status, c.asset_amount::text as owner_amount, c.asset as owner_asset, m.amount as money_amount, m.asset as money_asset
       from charge_money m left join subscription_charges c on c.id = m.owner_uuid
      where c.id is null or c.status = ${CHARGE_FAILED}
     union all
     select 'AMOUNT_MISMATCH', 'subscription_charge', m.owner_id, m.id::text, c.status, c.asset_amount::text, c.asset, m.amount, m.asset
       from charge_money m join subscription_charges c on c.id = m.owner_uuid
      where c.status = ${CHARGE_SUCCEEDED} and (c.asset <> m.asset or c.asset_amount is null or c.asset_amount <> m.amount::numeric)
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'subscription_charge', c.id::text, null, c.status, c.asset_amount::text, c.asset, null, null
       from subscription_charges c
      where c.status = ${CHARGE_SUCCEEDED} and coalesce(c.asset_amount, 0) > 0 and ${sc.charge("c.id")}
        and not exists (select 1 from ledger_transactions t where t.idempotency_key = '${K.subscriptionCharge}' || c.id::text)
     union all
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER', 'order_credit', coalesce(o.id::text, m.idempotency_key), m.id::text, o.status, o.amount::text, o.asset, m.amount, m.asset
       from credit_money m left join payment_order_credits o on o.idempotency_key = m.idempotency_key
      where o.id is null or (o.status = ${CREDIT_DONE} and o.wallet_transaction_id is not null and o.wallet_transaction_id <> m.id::text)
     union all
     select 'AMOUNT_MISMATCH', 'order_credit', o.id::text, m.id::text, o.status, o.amount::text, o.asset, m.amount, m.asset
       from credit_money m join payment_order_credits o on o.idempotency_key = m.idempotency_key
      where o.status = ${CREDIT_DONE} and (o.asset <> m.asset or o.amount <> m.amount::numeric)
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'order_credit', o.id::text, null, o.status, o.amount::text, o.asset, null, null
       from payment_order_credits o
      where o.status = ${CREDIT_DONE} and ${sc.credit("o.id")} and not exists (select 1 from ledger_transactions t where t.idempotency_key = o.idempotency_key)
     union all
     -- refunds: money back to a customer and the refund row that owns it
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER', 'refund', m.owner_id, m.id::text, r.status, r.asset_amount::text, r.asset, m.amount, m.asset
       from refund_money m left join subscription_refunds r on r.id = m.owner_uuid
      where r.id is null or r.status = ${REFUND_FAILED}
     union all
     select 'AMOUNT_MISMATCH', 'refund', m.owner_id, m.id::text, r.status, r.asset_amount::text, r.asset, m.amount, m.asset
       from refund_money m join subscription_refunds r on r.id = m.owner_uuid
      where r.status = ${REFUND_SUCCEEDED} and (r.asset <> m.asset or r.asset_amount <> m.amount::numeric)
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'refund', r.id::text, null, r.status, r.asset_amount::text, r.asset, null, null
       from subscription_refunds r
      where r.status = ${REFUND_SUCCEEDED} and ${sc.refund("r.id")} and not exists (select 1 from ledger_transactions t where t.idempotency_key = '${K.refund}' || r.id::text)
     union all
     -- the wallet-call protocol's own reports, for every kind: parked rows, and PENDING rows no sweep finished in time
     ${walletCallAnomalies("subscription_charges", "subscription_charge", "asset_amount")}
     union all
     ${walletCallAnomalies("subscription_refunds", "refund", "asset_amount")}
     union all
     ${walletCallAnomalies("payment_order_credits", "order_credit", "amount")}
     union all
     ${walletCallAnomalies("payout_calls", "payout_call", "amount")}
     union all
     -- payouts: the debit of amount + fee and the payout row that owns it, both ways
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER', 'payout', m.owner_id, m.id::text, p.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from payout_money m left join payouts p on p.id = m.owner_uuid
      where p.id is null or p.status = ${PAYOUT_REFUSED}
     union all
     select 'AMOUNT_MISMATCH', 'payout', m.owner_id, m.id::text, p.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from payout_money m join payouts p on p.id = m.owner_uuid
      where p.asset <> m.asset or p.amount + p.fee <> m.amount::numeric
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'payout', p.id::text, null, p.status, (p.amount + p.fee)::text, p.asset, null, null
       from payouts p
      where p.source = 'MERCHANT' and p.debited_at is not null and not exists (select 1 from ledger_transactions t where t.idempotency_key = '${K.payoutDebit}' || p.id::text)
     union all
     -- the money back: only for a FAILED or CANCELLED payout, exactly its amount + fee
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER', 'payout_reversal', m.owner_id, m.id::text, p.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from reversal_money m left join payouts p on p.id = m.owner_uuid
      where p.id is null or p.status not in (${PAYOUT_FAILED},${PAYOUT_CANCELLED})
     union all
     select 'AMOUNT_MISMATCH', 'payout_reversal', m.owner_id, m.id::text, p.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from reversal_money m join payouts p on p.id = m.owner_uuid
      where p.asset <> m.asset or p.amount + p.fee <> m.amount::numeric
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'payout_reversal', p.id::text, null, p.status, (p.amount + p.fee)::text, p.asset, null, null
       from payouts p
      where p.source = 'MERCHANT' and p.reversed_at is not null and not exists (select 1 from ledger_transactions t where t.idempotency_key = '${K.payoutReversal}' || p.id::text)
     union all
     -- order refunds: the reservation of amount + fee and the refund (and its payout) that own it, both ways
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER', 'order_refund', m.owner_id, m.id::text, r.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from order_refund_money m left join order_refunds r on r.id = m.owner_uuid left join payouts p on p.id = r.payout_id
      where r.id is null or r.status = ${ORDER_REFUND_REFUSED}
     union all
     select 'AMOUNT_MISMATCH', 'order_refund', m.owner_id, m.id::text, r.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from order_refund_money m join order_refunds r on r.id = m.owner_uuid join payouts p on p.id = r.payout_id
      where p.asset <> m.asset or r.asset <> m.asset or p.amount + p.fee <> m.amount::numeric or r.amount <> p.amount
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'order_refund', r.id::text, null, r.status, (p.amount + p.fee)::text, p.asset, null, null
       from order_refunds r join payouts p on p.id = r.payout_id
      where p.debited_at is not null and not exists (select 1 from ledger_transactions t where t.idempotency_key = '${K.orderRefund}' || r.id::text)
     union all
     -- an order refund's money back: only for an expired claim or a failed (or cancelled) payout, exactly amount + fee
     select 'MONEY_WITHOUT_SUCCEEDED_OWNER', 'order_refund_return', m.owner_id, m.id::text, r.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from order_refund_return_money m left join order_refunds r on r.id = m.owner_uuid left join payouts p on p.id = r.payout_id
      where r.id is null or p.status not in (${PAYOUT_FAILED},${PAYOUT_CANCELLED},${PAYOUT_EXPIRED})
     union all
     select 'AMOUNT_MISMATCH', 'order_refund_return', m.owner_id, m.id::text, r.status, (p.amount + p.fee)::text, p.asset, m.amount, m.asset
       from order_refund_return_money m join order_refunds r on r.id = m.owner_uuid join payouts p on p.id = r.payout_id
      where p.asset <> m.asset or p.amount + p.fee <> m.amount::numeric
     union all
     select 'SUCCEEDED_OWNER_WITHOUT_MONEY', 'order_refund_return', r.id::text, null, r.status, (p.amount + p.fee)::text, p.asset, null, null
       from order_refunds r join payouts p on p.id = r.payout_id
      where p.reversed_at is not null and not exists (select 1 from ledger_transactions t where t.idempotency_key = '${K.orderRefundReturn}' || r.id::text)
     union all
     -- a payout PAID twice: two payout.paid events for one payout, or two payouts on one chain transfer
     select 'PAYOUT_PAID_TWICE', 'payout', e.data->>'id', null, ${PAYOUT_PAID}, count(*)::text, null, null, null
       from events e where e.type = 'payout.paid' and ${sc.paidEvent("e")} group by e.data->>'id' having count(*) > 1
     union all
     select 'PAYOUT_PAID_TWICE', 'payout', min(p.id::text), null, ${PAYOUT_PAID}, count(*)::text, min(p.asset), null, null
       from payouts p where p.tx_hash is not null group by p.tx_hash having count(*) > 1
     union all
     -- the PAYOUTS system account holds exactly what payouts took and did not give back
     select 'AMOUNT_MISMATCH', 'payouts_account', a.asset, null, null, coalesce(o.total, 0)::text, a.asset, a.balance::text, a.asset
       from ledger_accounts a
       left join (select asset, sum(amount + fee) as total from payouts where debited_at is not null and reversed_at is null group by asset) o on o.asset = a.asset
      where a.owner_type = 'SYSTEM' and a.system_code = 'PAYOUTS' and a.balance <> coalesce(o.total, 0)
        -- a debit or reversal in flight (moved, not yet settled) is judged once it settles
        and not exists (select 1 from payout_calls c where c.asset = a.asset and c.kind in ('DEBIT','REVERSAL') and c.status = '${WALLET_CALL_PENDING}')
     union all
     -- a charge's refunded total must be the sum of its succeeded refunds
     select 'AMOUNT_MISMATCH', 'subscription_charge', c.id::text, null, c.status, c.asset_amount_refunded::text, c.asset, coalesce(s.total, 0)::text, c.asset
       from subscription_charges c
       left join (select charge_id, sum(asset_amount) as total from subscription_refunds
                   where status = ${REFUND_SUCCEEDED} and ${sc.charge("charge_id")} group by charge_id) s on s.charge_id = c.id
      where c.asset_amount_refunded <> coalesce(s.total, 0) and ${sc.charge("c.id")}
     union all
     -- money for a period the subscription never billed: a period charge succeeded but the subscription did not move
     -- past it (a first payment that succeeded after its subscription expired, issue 21; a renewal settled on a cancelled one)
     select 'CHARGE_WITHOUT_BILLED_PERIOD', 'subscription_charge', c.id::text, c.wallet_transaction_id, c.status, c.asset_amount::text, c.asset, null, null
       from subscription_charges c join subscriptions s on s.id = c.subscription_id
      where c.status = ${CHARGE_SUCCEEDED} and c.change_session_id is null and c.period_index >= s.next_period_index and ${sc.charge("c.id")}
        -- given back in full (an operator's refund): nothing is kept for nothing any more
        and c.asset_amount_refunded < coalesce(c.asset_amount, 0)
     order by 1, 2, 3`,
    sc.params,
  );
}

/** Records the anomaly unless it was recorded before (unique per kind and owner); true when this call recorded it. */
export async function recordAnomalyOnce(
  em: EntityManager,
  a: { kind: AnomalyKind; ownerType: OwnerType; ownerId: string; walletTransactionId: string | null; details: Record<string, string | number | null> },
  now: Date,
): Promise<boolean> {
  const inserted = await em.execute<{ id: string }[]>(
    `insert into reconciliation_anomalies (id, kind, owner_type, owner_id, wallet_transaction_id, details, detected_at)
       values (?, ?, ?, ?, ?, ?, ?) on conflict on constraint reconciliation_anomalies_once do nothing returning id`,
    [randomUUID(), a.kind, a.ownerType, a.ownerId, a.walletTransactionId, JSON.stringify(a.details), now],
  );
  return inserted.length > 0;
}
