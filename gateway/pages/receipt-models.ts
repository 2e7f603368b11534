import type { ReceiptView } from "../receipts/receipt-pdf.ts";
import { amountText, every, formatUtc } from "./page-text.ts";
import type { ReceiptModel } from "./views.ts";

const day = (iso: string) => iso.slice(0, 10);
const isZero = (value: string) => /^0*(\.0*)?$/.test(value);

/** The receipt page's rows, in words and by the pages' one rule for amounts and times (page-text.ts). */
export function receiptModel(r: ReceiptView, pdfUrl: string): ReceiptModel {
  const money = (value: string) => amountText(value, r.currency);
  const lines: { label: string; value: string }[] = [
    { label: "Receipt number", value: r.receiptNumber },
    { label: "Date", value: formatUtc(new Date(r.date)) },
    { label: "Plan", value: r.plan ? `${r.plan.name}, every ${every(r.plan.interval, r.plan.intervalCount)}` : "—" },
    { label: r.purpose === "PLAN_CHANGE" ? "Paid in period" : "Period", value: `${day(r.periodStart)} to ${day(r.periodEnd)}` },
    { label: "Subtotal", value: money(r.subtotal) },
    { label: "Discount", value: isZero(r.discountAmount) ? money("0") : `− ${money(r.discountAmount)}` },
  ];
  if (!isZero(r.creditApplied)) lines.push({ label: "Credit applied", value: `− ${money(r.creditApplied)}` });
  lines.push(
    { label: "Amount paid", value: money(r.amount) },
    { label: "Paid in", value: amountText(r.assetAmount, r.asset) },
    { label: "Rate", value: r.rate ? `1 ${r.currency} = ${amountText(r.rate, r.asset)}` : "—" },
    { label: "Rate time", value: r.rateAt ? formatUtc(new Date(r.rateAt)) : "—" },
    { label: "Ledger transaction", value: r.walletTransactionId ?? "—" },
  );
  return {
    merchantName: r.merchant.name,
    receiptNumber: r.receiptNumber,
    amount: money(r.amount),
    lines,
    refunds: r.refunds.map((f) => ({ date: formatUtc(new Date(f.date)), amount: money(f.amount), assetAmount: amountText(f.assetAmount, r.asset) })),
    pdfUrl,
  };
}
