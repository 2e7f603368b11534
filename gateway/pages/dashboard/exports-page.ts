import { Readable } from "node:stream";
import type { Router } from "@koa/router";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { stringify } from "csv-stringify";
import { dashboardRoute, refuse, type DashboardDeps, type Signed } from "./member-gate.ts";
import { DASHBOARD } from "./paths.ts";
import { safeCell } from "./csv-cells.ts";
import type { Ctx } from "../page-http.ts";
import type { ExportedCharge } from "../../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import type { BalanceTransaction } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";

const EXPORTS_PATH = `${DASHBOARD}/exports`;
const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Rows per RPC batch: large enough that the round trips cost little, small enough that memory stays flat. */
const BATCH = 2000;

type Period = { from: Date; to: Date; fromText: string; toText: string };

/** `from` and `to` are days (UTC), both included; answers the sentences to show when they are not. */
function periodOf(query: Record<string, unknown>): { period?: Period; errors: string[] } {
  const fromText = typeof query.from === "string" ? query.from.trim() : "";
  const toText = typeof query.to === "string" ? query.to.trim() : "";
  const day = (text: string) => (DATE.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) ? new Date(`${text}T00:00:00.000Z`) : undefined);
  const from = day(fromText);
  const to = day(toText);
  const errors: string[] = [];
  if (!from) errors.push("Enter the From date, for example 2026-01-01.");
  if (!to) errors.push("Enter the To date, for example 2026-01-31.");
  if (from && to && to < from) errors.push("The To date must be the same as or after the From date.");
  if (from && to && to.getTime() - from.getTime() >= 400 * DAY_MS) errors.push("Export at most 400 days at a time.");
  if (errors.length || !from || !to) return { errors };
  return { period: { from, to: new Date(to.getTime() + DAY_MS), fromText, toText }, errors };
}

/** One export: its file name, its columns, and a batch reader (`after` = the previous batch's key). */
interface ExportKind<Row> {
  name: string;
  columns: string[];
  batch(deps: DashboardDeps, merchantId: string, from: Timestamp, to: Timestamp, after: string | undefined): Promise<{ rows: Row[]; next: string | undefined }>;
  cells(row: Row): (string | undefined)[];
}

const iso = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : undefined);

const CHARGES: ExportKind<ExportedCharge> = {
  name: "charges",
  columns: [
    "id",
    "createdAt",
    "settledAt",
    "subscriptionId",
    "walletUserId",
    "purpose",
    "status",
    "failureReason",
    "currency",
    "amount",
    "asset",
    "assetAmount",
    "rate",
    "amountRefunded",
    "assetAmountRefunded",
    "receiptNumber",
  ],
  async batch(deps, merchantId, from, to, after) {
    const res = await deps.clients.subscriptions.exportCharges({ merchantId, from, to, after, limit: BATCH });
    return { rows: res.charges, next: res.next };
  },
  cells: (c) => [
    c.id,
    iso(c.createdAt),
    iso(c.settledAt),
    c.subscriptionId,
    c.walletUserId,
    c.purpose,
    c.status,
    c.failureReason,
    c.currency,
    c.amount,
    c.asset,
    c.assetAmount,
    c.rate,
    c.amountRefunded,
    c.assetAmountRefunded,
    c.receiptNumber,
  ],
};

const BALANCE: ExportKind<BalanceTransaction> = {
  name: "balance-transactions",
  columns: ["id", "createdAt", "type", "asset", "amount", "balanceAfter", "sourceType", "sourceId", "transactionId"],
  async batch(deps, merchantId, from, to, after) {
    const res = await deps.clients.wallet.exportBalanceTransactions({ merchantId, from, to, after, limit: BATCH });
    return { rows: res.transactions, next: res.next };
  },
  cells: (t) => [t.id, iso(t.createdAt), t.type, t.asset, t.amount, t.balanceAfter, t.sourceType, t.sourceId, t.transactionId],
};

/**
 * Exports (OWNER and ADMIN: exports.read): the page with one form per file,
 * and the files, streamed. Each file is read from its service in keyset
 * batches and written through csv-stringify as it comes (backpressure: the
 * next batch is asked for only when the client has taken the previous one),
 * so a year of a large merchant costs the gateway and the services the
 * memory of one batch (docs/hosted-pages.md#exports has the measured figure).
 */
export function exportsPage(router: Router, deps: DashboardDeps): void {
  const today = () => new Date().toISOString().slice(0, 10);
  const render = (ctx: Ctx, signed: Signed, status: number, errors: string[] = [], period?: { from: string; to: string }) =>
    deps.pages.page(ctx, status, "dashboard/exports", {
      frame: signed.frame("Exports", EXPORTS_PATH),
      canExport: signed.may("exports.read"),
      from: period?.from ?? `${today().slice(0, 8)}01`,
      to: period?.to ?? today(),
      errors,
    });

  dashboardRoute(router, deps, EXPORTS_PATH, {
    async get(ctx, signed) {
      render(ctx, signed, 200);
    },
  });

  for (const kind of [CHARGES, BALANCE] as ExportKind<unknown>[]) {
    dashboardRoute(router, deps, `${EXPORTS_PATH}/${kind.name}.csv`, {
      async get(ctx, signed) {
        if (!signed.may("exports.read")) return refuse(deps, ctx, signed, EXPORTS_PATH);
        const { period, errors } = periodOf(ctx.query);
        if (!period) return render(ctx, signed, 400, errors, { from: String(ctx.query.from ?? ""), to: String(ctx.query.to ?? "") });
        const merchantId = signed.member.merchantId;
        const from = timestampFromDate(period.from);
        const to = timestampFromDate(period.to);
        let first: { rows: unknown[]; next: string | undefined };
        try {
          // The first batch before any byte is sent: a refusal is still a page, not a cut file.
          first = await kind.batch(deps, merchantId, from, to, undefined);
        } catch (err) {
          if (err instanceof ConnectError && err.code === Code.InvalidArgument) return render(ctx, signed, 400, [err.rawMessage]);
          throw err;
        }
        async function* rows() {
          let batch = first;
          for (;;) {
            for (const row of batch.rows) yield kind.cells(row).map(safeCell);
            if (!batch.next) return;
            batch = await kind.batch(deps, merchantId, from, to, batch.next);
          }
        }
        ctx.status = 200;
        ctx.type = "text/csv; charset=utf-8";
        ctx.set("Content-Disposition", `attachment; filename="${kind.name}-${period.fromText}-to-${period.toText}.csv"`);
        ctx.set("Cache-Control", "no-store");
        const csv = stringify({ header: true, columns: kind.columns });
        const source = Readable.from(rows());
        // A failed batch midway ends the download with an error (the file is visibly cut), never with a 200 and half a file silently.
        source.on("error", (err) => csv.destroy(err));
        ctx.body = source.pipe(csv);
      },
    });
  }
}
