/**
 * The one status the wallet-call protocol (wallet-call.ts) names: a row whose
 * call is open. It is the same word on every kind's table (charges, refunds,
 * credits, payout calls); what a row settles to is the kind's own (a charge's
 * SUCCEEDED or FAILED, a credit's DONE…), so the protocol names no other.
 * A plain name, so SQL inlines it as it is.
 */
export const WALLET_CALL_PENDING = "PENDING";
