import { Code, ConnectError } from "@connectrpc/connect";

/**
 * What the hosted approval pages approve. The flow (login as the right wallet
 * user → choose the funding asset → PIN → approve, or cancel) and its security
 * rules are the same for every kind of approval; a provider says what is being
 * approved, which assets can pay, and what approving or declining does.
 * Subscriptions are one kind (subscription-approval.ts); a plan change
 * session is another (change-approval.ts), mounted on its own path with the
 * same pages. Each kind says only what differs (its RPCs and how its summary
 * reads); `approvalProvider` below does the rest the same way for both.
 */
export type ApprovalState = "PENDING" | "EXPIRED" | "USED" | "CANCELLED";

interface ApprovalSummary {
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
  /**
   * Approving charges each choice's `amountDue` at once (no trial; a plan change's immediate charge):
   * an account whose balance does not cover it cannot be chosen. With a trial it is the first
   * charge's amount, later: such an account may be chosen, with a warning.
   */
  dueNow: boolean;
  /** The customer may name funding fallbacks here (subscription approvals; issue 26). */
  offersFallback?: boolean;
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

type ApproveResult = { approved: true; redirectUrl: string } | { approved: false; reason: string; message: string };

export interface ApprovalProvider {
  /** Undefined when the token names nothing. */
  load(token: string): Promise<ApprovalView | undefined>;
  fundingChoices(token: string, walletUserId: string): Promise<FundingChoice[]>;
  /** Called after the gateway verified the password and the PIN with the wallet. `fallbackAssets` in order (only where offered). */
  approve(token: string, walletUserId: string, fundingAsset: string, fallbackAssets: string[]): Promise<ApproveResult>;
  decline(token: string): Promise<{ redirectUrl: string }>;
}

/** What differs between approval kinds: the RPCs behind the pages and how the loaded approval reads. */
interface ApprovalKind<Loaded> {
  /** NOT_FOUND means the token names nothing (the page answers 404). */
  fetch(token: string): Promise<Loaded>;
  view(loaded: Loaded): ApprovalView;
  fundingOptions(token: string, walletUserId: string): Promise<{ options: FundingChoice[] }>;
  approve(token: string, walletUserId: string, fundingAsset: string, fallbackAssets: string[]): Promise<ApproveResult>;
  decline(token: string): Promise<{ redirectUrl: string }>;
}

export function approvalProvider<Loaded>(kind: ApprovalKind<Loaded>): ApprovalProvider {
  return {
    async load(token) {
      try {
        return kind.view(await kind.fetch(token));
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.NotFound) return undefined;
        throw err;
      }
    },
    async fundingChoices(token, walletUserId) {
      const { options } = await kind.fundingOptions(token, walletUserId);
      // Only the fields the page shows (the FundingOption message has more).
      return options.map((o) => ({
        asset: o.asset,
        name: o.name,
        network: o.network,
        balance: o.balance,
        amountDue: o.amountDue,
        sufficient: o.sufficient,
        frozen: o.frozen,
      }));
    },
    approve: (token, walletUserId, fundingAsset, fallbackAssets) => kind.approve(token, walletUserId, fundingAsset, fallbackAssets),
    decline: (token) => kind.decline(token),
  };
}

/** successUrl / cancelUrl (stored by the service) with the outcome added to the query, in the order given. */
export function withResult(target: string, params: Record<string, string>): string {
  const url = new URL(target);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

/** The origins of the URLs the flow may redirect to (a URL that does not parse is left out). */
export function redirectOrigins(...urls: string[]): string[] {
  return urls.flatMap((url) => {
    try {
      return [new URL(url).origin];
    } catch {
      return [];
    }
  });
}
