import { Router } from "@koa/router";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { PricingService } from "../../proto/gen/billing/subscriptions/v1/pricing_pb.ts";
import type { ReceiptView } from "../receipts/receipt-pdf.ts";
import { securityHeaders, type Ctx, type PageResponder } from "./page-http.ts";
import { receiptModel } from "./receipt-models.ts";

const RECEIPTS_PATH = "/receipts";
/** The service's token shape (pricing/receipts.ts): anything else is not found without asking it. */
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

/**
 * The customer's receipt at `{PUBLIC_BASE_URL}/receipts/{token}` (the
 * charge's receiptUrl): no login, the unguessable token is the key, as for
 * `{receiptUrl}.pdf` (gateway/routes/charges.ts, mounted before the pages so
 * the `.pdf` path is served there). Never indexed (`noindex` in the head and
 * the X-Robots-Tag header), never cached, no referrer (the URL is the key),
 * printable (a print style drops the chrome).
 */
export function receiptPages(options: { pricing: Client<typeof PricingService>; pages: PageResponder }): Router {
  const { pricing, pages } = options;
  const router = new Router();
  router.get(`${RECEIPTS_PATH}/:token`, async (ctx) => {
    const c = ctx as unknown as Ctx;
    await pages.guarded(c, async () => {
      securityHeaders(c, []);
      c.set("X-Robots-Tag", "noindex");
      const token = c.params.token!;
      const notFound = () => pages.statusPage(c, 404, "Receipt not found", "This receipt link is not valid. Check that you opened the whole link.");
      if (!TOKEN.test(token)) return notFound();
      let res;
      try {
        res = await pricing.getReceipt({ token });
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return notFound();
        throw err;
      }
      const record = JSON.parse(res.recordJson) as ReceiptView;
      pages.page(c, 200, "receipt", receiptModel(record, `${RECEIPTS_PATH}/${token}.pdf`));
    });
  });
  return router;
}
