/**
 * What the hosted approval pages approve. The flow (login as the right wallet
 * user → choose the funding asset → PIN → approve, or cancel) and its security
 * rules are the same for every kind of approval; a provider says what is being
 * approved, which assets can pay, and what approving or declining does.
 * Subscriptions are one provider (subscription-approval.ts); a plan change
 * session is another, mounted on its own path with the same pages.
 */
export type ApprovalState = "PENDING" | "EXPIRED" | "USED" | "CANCELLED";

export interface ApprovalSummary {
  /** Page heading, e.g. "Subscribe to Pro". */
  title: string;
  merchantName: string;
  /** The headline price, e.g. "10.50 USD / month". */
  price: string;
  /** Rows of the order summary (label, value). */
  lines: { label: string; value: string }[];
  /** A sentence under the summary (trial terms, what happens on approval). */
  note?: string;
  /** The approve button's text, e.g. "Subscribe". */
  approveLabel: string;
}

export interface ApprovalView {
  state: ApprovalState;
  /** Only this wallet user may approve. */
  walletUserId: string;
  summary: ApprovalSummary;
  expiresAt: Date;
  /** Origins the flow may redirect to (for the Content-Security-Policy form-action). */
  redirectOrigins: string[];
  /** The paying account is already decided (a plan change: the subscription's): shown, not chosen. */
  fixedFunding?: boolean;
}

export interface FundingChoice {
  asset: string;
  name: string;
  network: string;
  balance: string;
  /** What the approval would charge in this asset now (or at the first billing). */
  amountDue: string;
  sufficient: boolean;
  frozen: boolean;
}

/** Both approval kinds list funding options with the same fields (FundingOption messages). */
export function toFundingChoice(o: FundingChoice): FundingChoice {
  return {
    asset: o.asset,
    name: o.name,
    network: o.network,
    balance: o.balance,
    amountDue: o.amountDue,
    sufficient: o.sufficient,
    frozen: o.frozen,
  };
}

export type ApproveResult =
  | { approved: true; redirectUrl: string }
  | { approved: false; reason: string; message: string };

export interface ApprovalProvider {
  /** Undefined when the token names nothing. */
  load(token: string): Promise<ApprovalView | undefined>;
  fundingChoices(token: string, walletUserId: string): Promise<FundingChoice[]>;
  /** Called after the gateway verified the password and the PIN with the wallet. */
  approve(token: string, walletUserId: string, fundingAsset: string): Promise<ApproveResult>;
  decline(token: string): Promise<{ redirectUrl: string }>;
}
