import { Router } from "@koa/router";
import { ConnectError, type Client } from "@connectrpc/connect";
import type { PayoutsService, RefundClaimResponse } from "../../proto/gen/billing/payouts/v1/payouts_pb.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import { formBody, redirect, securityHeaders, type Ctx, type PageResponder } from "./page-http.ts";
import { postedSession, type SessionCodec } from "./page-session.ts";
import type { LoginLimiter } from "./login-limiter.ts";
import { amountText, formatUtc } from "./page-text.ts";

interface ClaimPagesOptions {
  payouts: Client<typeof PayoutsService>;
  sessions: SessionCodec;
  /** Wrong addresses and unknown tokens per client address (the hosted pages' limiter). */
  limiter: LoginLimiter;
  pages: PageResponder;
}

const HINTS: Record<string, string> = {
  BITCOIN: "A Bitcoin address: bc1… (segwit or taproot), 1… or 3….",
  ETHEREUM: "An Ethereum address: 0x followed by 40 hexadecimal characters.",
  TRON: "A TRON address: 34 characters starting with T.",
};

/** The service's rule ("address: must be …") in words for the page. */
const addressError = (message: string) => `Check the address: ${message.replace(/^address:\s*/, "")}.`.replace(/\.\.$/, ".");

/**
 * The refund claim page, {PUBLIC_BASE_URL}/claims/<token>: the customer of a
 * refunded payment order enters the address to receive it. No login (the
 * unguessable token is the claim), no JavaScript; the form carries a CSRF
 * token bound to a signed cookie scoped to the page; wrong addresses and
 * unknown tokens count against the client address in the hosted pages'
 * limiter (20 per 15 minutes, then 429); the headers are the approval
 * pages' (no-store, no framing, no referrer, a CSP without scripts).
 */
export function claimPages(options: ClaimPagesOptions): Router {
  const { payouts, sessions, limiter, pages } = options;
  const router = new Router();
  const pathOf = (token: string) => `/claims/${encodeURIComponent(token)}`;

  function renderForm(ctx: Ctx, token: string, claim: RefundClaimResponse, csrf: string, status = 200, error?: string, address = "") {
    const amount = amountText(claim.amount, claim.asset);
    pages.page(ctx, status, "claim", {
      action: pathOf(token),
      csrf,
      summary: {
        merchantName: claim.merchantName,
        title: "Receive your refund",
        price: amount,
        lines: [
          { label: "From", value: claim.merchantName },
          { label: "Amount", value: amount },
          { label: "Network", value: claim.network },
        ],
        note: `${claim.merchantName} is refunding ${amount}. Enter the ${claim.network} address it should be sent to. Check it carefully: a transfer on the chain cannot be undone.`,
        expires: claim.expiresAt ? formatUtc(new Date(claim.expiresAt)) : "",
      },
      network: claim.network,
      hint: HINTS[claim.network] ?? "",
      address,
      error,
      claimLabel: `Send ${amount} to this address`,
    });
  }

  /** The page for a claim that is not waiting for an address (answered or expired). */
  function renderState(ctx: Ctx, claim: RefundClaimResponse): void {
    const amount = amountText(claim.amount, claim.asset);
    if (claim.state === "EXPIRED") {
      return pages.statusPage(
        ctx,
        410,
        "This link has expired",
        `The time to claim this refund from ${claim.merchantName} has run out. Ask the merchant for a new link.`,
      );
    }
    const message =
      claim.state === "PAID"
        ? `${amount} has been sent to your address and confirmed on the chain.`
        : claim.state === "FAILED"
          ? `The transfer of ${amount} could not be completed. ${claim.merchantName} has been told; contact them about your refund.`
          : `Your refund of ${amount} is on its way to your address. It arrives once the network confirms it.`;
    pages.page(ctx, 200, "claim-done", { title: claim.state === "FAILED" ? "Refund not sent" : "Refund on its way", message, address: claim.address });
  }

  /** Loads the claim, answering 404 or 429 itself (undefined). */
  async function load(ctx: Ctx, token: string): Promise<RefundClaimResponse | undefined> {
    securityHeaders(ctx, []);
    if (await limiter.blocked(ctx.ip)) {
      pages.statusPage(ctx, 429, "Too many attempts", "Too many attempts from this device. Try again in 15 minutes.");
      return undefined;
    }
    const claim = await payouts.getRefundClaim({ token });
    if (!claim.found) {
      await limiter.failed(ctx.ip);
      pages.statusPage(ctx, 404, "Link not found", "This refund link is not valid. Check that you opened the whole link, or ask the merchant for a new one.");
      return undefined;
    }
    return claim;
  }

  router.get("/claims/:token", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const token = c.params.token!;
    await pages.guarded(c, async () => {
      const claim = await load(c, token);
      if (!claim) return;
      if (claim.state !== "AWAITING_ADDRESS") return renderState(c, claim);
      const session = sessions.read(c, token) ?? sessions.issue(c, token, pathOf(token));
      renderForm(c, token, claim, session.csrf);
    });
  });

  router.post("/claims/:token", async (ctx) => {
    const c = ctx as unknown as Ctx;
    const token = c.params.token!;
    await pages.guarded(c, async () => {
      const claim = await load(c, token);
      if (!claim) return;
      if (claim.state !== "AWAITING_ADDRESS") return renderState(c, claim);
      const form = formBody(c);
      const session = postedSession(sessions, c, token, form);
      if (!session) return pages.staleForm(c);
      const action = form.action ?? "claim";
      if (action !== "claim") return renderForm(c, token, claim, session.csrf, 400, "Unknown action.");
      const address = (form.address ?? "").trim();
      if (!address) return renderForm(c, token, claim, session.csrf, 422, "Enter the address to send the refund to.");
      try {
        await payouts.claimOrderRefund({ token, address });
      } catch (err) {
        const code = err instanceof ConnectError ? errorCodeOf(err) : undefined;
        if (code === "INVALID_REQUEST" && err instanceof ConnectError) {
          await limiter.failed(c.ip);
          return renderForm(c, token, claim, session.csrf, 422, addressError(err.rawMessage), address);
        }
        if (code === "CLAIM_EXPIRED" || code === "CLAIM_USED") {
          const now = await payouts.getRefundClaim({ token });
          return renderState(c, now);
        }
        throw err;
      }
      sessions.clear(c, pathOf(token));
      return redirect(c, pathOf(token));
    });
  });

  return router;
}
