import type { ApprovalView, FundingChoice } from "./approval-provider.ts";
import { amountText, formatUtc } from "./page-text.ts";
import type { AssetChoiceModel, SummaryModel } from "./views.ts";

/** What the approval pages show, from the provider's view: the summary and the accounts that may pay. */
export function summaryModel(view: ApprovalView): SummaryModel {
  const { summary } = view;
  return {
    merchantName: summary.merchantName,
    title: summary.title,
    price: summary.price,
    lines: summary.lines,
    note: summary.note,
    expires: formatUtc(view.expiresAt),
  };
}

/**
 * The funding radios, each with its balance and what it would pay. The checked one: the customer's
 * last pick, else the first that covers the amount, else the first. A fixed asset (a plan change: the
 * subscription's) is still a radio, the only one and checked, so `[name=fundingAsset]` is a radio of
 * asset codes on every approval page (the form contract).
 */
export function choiceModels(view: ApprovalView, choices: FundingChoice[], selected?: string): AssetChoiceModel[] {
  const fixed = view.fixedFunding === true;
  const checked = selected ?? choices.find((c) => c.sufficient)?.asset ?? choices[0]?.asset;
  return choices.map((c) => ({
    asset: c.asset,
    name: c.name,
    network: c.network,
    balance: `Balance: ${amountText(c.balance, c.asset)}`,
    due: fixed ? `Due now: ${amountText(c.amountDue, c.asset)}` : amountText(c.amountDue, c.asset),
    checked: fixed || c.asset === checked,
    disabled: false,
    note: c.frozen ? "frozen" : !c.sufficient ? "insufficient balance" : undefined,
    key: c.asset,
  }));
}
