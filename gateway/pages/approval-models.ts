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
 * The funding radios. An account that cannot pay what approving charges now
 * (frozen, or its balance below the amount due now) is shown disabled with
 * the reason beside it; with a trial nothing is charged now, so a low balance
 * is only a warning. The checked one: the customer's last pick if it can be
 * chosen, else the first that covers the amount, else the first choosable.
 */
export function choiceModels(view: ApprovalView, choices: FundingChoice[], selected?: string): AssetChoiceModel[] {
  const models = choices.map((c) => {
    const disabled = c.frozen || (view.dueNow && !c.sufficient);
    const note = c.frozen
      ? "This account is frozen, so it cannot pay."
      : !c.sufficient
        ? view.dueNow
          ? "Not enough balance to pay this now."
          : "Balance below one charge: add funds before the first charge."
        : undefined;
    const due = amountText(c.amountDue, c.asset);
    return {
      asset: c.asset,
      name: c.name,
      network: c.network,
      balance: `Balance: ${amountText(c.balance, c.asset)}`,
      due: view.dueNow ? `Due now: ${due}` : `${due} per charge`,
      checked: false,
      disabled,
      note,
      key: c.asset,
      sufficient: c.sufficient,
    };
  });
  const choosable = models.filter((m) => !m.disabled);
  const checked = choosable.find((m) => m.asset === selected) ?? choosable.find((m) => m.sufficient) ?? choosable[0];
  return models.map(({ sufficient: _, ...m }) => ({ ...m, checked: m.asset === checked?.asset }));
}
