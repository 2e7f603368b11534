import { BinaryBody, defineRoutes } from "../route.ts";
import { chargeSchema } from "../schemas/subscription-charges.ts";
import { recordOf } from "../../services/platform/rpc/record-json.ts";
import { renderReceiptPdf, type ReceiptView } from "../receipts/receipt-pdf.ts";

/** A receipt is a document: never cached by a shared cache, never indexed, its link (a token) never sent on. */
const RECEIPT_HEADERS = { "Cache-Control": "private, no-store", "X-Robots-Tag": "noindex", "Referrer-Policy": "no-referrer" };

const pdf = async (recordJson: string, receiptNumber: string) =>
  new BinaryBody("application/pdf", await renderReceiptPdf(JSON.parse(recordJson) as ReceiptView), {
    ...RECEIPT_HEADERS,
    "Content-Disposition": `inline; filename="receipt-${receiptNumber.replace(/[^A-Za-z0-9-]/g, "")}.pdf"`,
  });

export const chargeRoutes = defineRoutes([
  {
    method: "get",
    path: "/api/v1/charges/:id",
    operationId: "getCharge",
    summary: "Read one charge",
    description: "The same record as the charges list and the `charge` of charge events, with `receiptNumber` and `receiptUrl`.",
    tag: "Charges",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The charge (404 CHARGE_NOT_FOUND, also for another merchant's)", schema: chargeSchema } },
    async handler({ params, merchantId }, { clients }) {
      return { status: 200, body: recordOf((await clients.pricing.getCharge({ merchantId, chargeId: params.id! })).charge) };
    },
  },
  {
    method: "get",
    path: "/api/v1/charges/:id/receipt.pdf",
    operationId: "getChargeReceiptPdf",
    summary: "A charge's receipt as a PDF",
    description: "Every SUCCEEDED charge above 0 has one (404 RECEIPT_NOT_FOUND otherwise; CHARGE_NOT_FOUND for another merchant's).",
    tag: "Charges",
    auth: "apiKey",
    errors: [404],
    responses: { 200: { description: "The receipt", contentType: "application/pdf" } },
    async handler({ params, merchantId }, { clients }) {
      const res = await clients.pricing.getReceipt({ merchantId, chargeId: params.id! });
      return { status: 200, body: await pdf(res.recordJson, res.receiptNumber) };
    },
  },
  {
    method: "get",
    path: "/receipts/:token.pdf",
    operationId: "getReceiptPdf",
    summary: "The customer's receipt as a PDF ({receiptUrl}.pdf)",
    description: "No login: the unguessable token in `receiptUrl` is the key. `noindex`, not cached.",
    tag: "Receipts",
    auth: "none",
    errors: [404],
    responses: { 200: { description: "The receipt (404 RECEIPT_NOT_FOUND for an unknown token)", contentType: "application/pdf" } },
    async handler({ params }, { clients }) {
      const res = await clients.pricing.getReceipt({ token: params.token! });
      return { status: 200, body: await pdf(res.recordJson, res.receiptNumber) };
    },
  },
]);
