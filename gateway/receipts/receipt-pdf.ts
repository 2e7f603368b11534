import { createRequire } from "node:module";

/**
 * The receipt as a PDF (pdfkit), one A4 page, with DejaVu Sans embedded
 * (vendored by the npm package dejavu-fonts-ttf: no system font needed), so
 * Latin and Cyrillic names (and most other scripts a merchant uses) render
 * and copy as text. Amounts are printed exactly as the record carries them.
 */
const require = createRequire(import.meta.url);
const FONT = require.resolve("dejavu-fonts-ttf/ttf/DejaVuSans.ttf");
const FONT_BOLD = require.resolve("dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf");

/** What the receipt shows: the service's receipt record (services/subscriptions/pricing/receipts.ts). */
export interface ReceiptView {
  receiptNumber: string;
  date: string;
  merchant: { name: string };
  plan: { name: string; interval: string; intervalCount: number } | null;
  purpose: string;
  periodStart: string;
  periodEnd: string;
  currency: string;
  subtotal: string;
  discountAmount: string;
  creditApplied: string;
  amount: string;
  asset: string;
  assetAmount: string;
  rate: string | null;
  rateAt: string | null;
  walletTransactionId: string | null;
  chargeId: string;
  refunds: { amount: string; assetAmount: string; date: string }[];
}

const day = (iso: string) => iso.slice(0, 10);
const instant = (iso: string) => `${iso.slice(0, 19).replace("T", " ")} UTC`;

export async function renderReceiptPdf(r: ReceiptView): Promise<Buffer> {
  // Loaded on the first receipt, not at start: pdfkit and its font tables are 11 MiB of every gateway's RSS (issue 27).
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({ size: "A4", margin: 56, info: { Title: `Receipt ${r.receiptNumber}`, Author: r.merchant.name } });
  doc.registerFont("body", FONT);
  doc.registerFont("bold", FONT_BOLD);
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });

  doc.font("bold").fontSize(18).text(r.merchant.name);
  doc.moveDown(0.3).font("body").fontSize(12).text(`Receipt ${r.receiptNumber}`);
  doc.text(`Date: ${instant(r.date)}`);
  doc.moveDown();

  const row = (label: string, value: string, font: "body" | "bold" = "body") => {
    const y = doc.y;
    doc.font(font).fontSize(11).text(label, 56, y, { width: 200 });
    doc.text(value, 260, y, { width: 280 });
    doc.moveDown(0.2);
  };
  const plan = r.plan
    ? `${r.plan.name} (every ${r.plan.intervalCount > 1 ? `${r.plan.intervalCount} ` : ""}${r.plan.interval.toLowerCase()}${r.plan.intervalCount > 1 ? "s" : ""})`
    : "—";
  row("Plan", plan);
  row(r.purpose === "PLAN_CHANGE" ? "Paid in period" : "Period", `${day(r.periodStart)} – ${day(r.periodEnd)}`);
  row("Subtotal", `${r.subtotal} ${r.currency}`);
  row("Discount", `${r.discountAmount} ${r.currency}`);
  if (r.creditApplied !== "0") row("Credit applied", `${r.creditApplied} ${r.currency}`);
  row("Amount paid", `${r.amount} ${r.currency}`, "bold");
  row("Paid in", `${r.assetAmount} ${r.asset}`);
  row("Rate", r.rate ? `1 ${r.currency} = ${r.rate} ${r.asset}${r.rateAt ? ` (at ${instant(r.rateAt)})` : ""}` : "—");
  row("Ledger transaction", r.walletTransactionId ?? "—");
  row("Charge", r.chargeId);
  if (r.refunds.length > 0) {
    doc.moveDown().font("bold").fontSize(12).text("Refunds", 56);
    for (const refund of r.refunds) row(instant(refund.date), `${refund.amount} ${r.currency} (${refund.assetAmount} ${r.asset})`);
  }
  doc.end();
  return done;
}
