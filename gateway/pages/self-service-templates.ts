import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { CustomerSubscription, FundingOption, SubscriptionCharge } from "../../proto/gen/billing/subscriptions/v1/subscriptions_pb.ts";
import { alert, escapeHtml as e, formatUtc, layout } from "./templates.ts";
import { every, money } from "./approval-provider.ts";

/**
 * The customer's self-service page (/wallet/subscriptions): server-rendered,
 * no JavaScript, one form per live subscription. Form names are a contract:
 * email, password, action=login|logout; per subscription subscriptionId,
 * fundingAsset (radios), pin, action=cancel-subscription|change-funding-asset.
 */

const STYLE = `
main{max-width:760px}
.list{display:flex;flex-direction:column;gap:16px}
.sub h2{font-size:19px;margin:0}
.sub .price{font-size:20px;margin:6px 0 0}
.badge{display:inline-block;font-size:12px;font-weight:700;letter-spacing:.03em;padding:2px 8px;border-radius:999px;background:#eef1f6;color:#3a4356;margin-top:8px}
.badge.live{background:#e7f6ec;color:#146c2e}.badge.warn{background:#fff4e5;color:#8a4b00}
.charges{padding:8px 24px 16px;border-bottom:1px solid #eceef3;overflow-x:auto}
.charges h3{font-size:14px;margin:8px 0}
table{width:100%;border-collapse:collapse;font-size:13px}
th,td{text-align:left;padding:6px 8px 6px 0;border-bottom:1px solid #f0f1f5;white-space:nowrap}
th{color:#5b6478;font-weight:600}
.empty{font-size:13px;color:#5b6478;margin:4px 0}
.top{display:flex;justify-content:space-between;align-items:center;gap:12px;margin:0 0 16px}
.top h1{font-size:22px}
.top form{padding:0}
.row{display:flex;flex-direction:row;gap:10px;flex-wrap:wrap}.row button{flex:1 1 180px}
.danger{background:#fff;color:#b42318;border:1px solid #f3b8b3}
.ended{opacity:.85}
@media (max-width:480px){main{padding:12px 8px 32px}.head,.summary,form{padding-left:16px;padding-right:16px}.charges{padding-left:16px;padding-right:16px}th,td{padding-right:6px;white-space:normal}.asset{flex-wrap:wrap}.asset .due{flex-basis:100%;text-align:left;padding-left:28px}.top{flex-wrap:wrap}}
`;

const date = (t: Timestamp | undefined) => (t ? formatUtc(timestampDate(t)) : "—");

export function selfServiceLoginPage(input: { action: string; csrf: string; error?: string; email?: string }): string {
  return layout(
    "Your subscriptions · Log in",
    `<div class="card">
<div class="head"><p class="merchant">Wallet</p><h1>Your subscriptions</h1></div>
${alert(input.error)}
<form method="post" action="${e(input.action)}" autocomplete="on">
  <input type="hidden" name="csrf" value="${e(input.csrf)}">
  <p class="note">Log in to your wallet to see every recurring payment you have authorized, and to cancel one or change how it is paid.</p>
  <label for="email">Email</label>
  <input id="email" type="email" name="email" autocomplete="username" required value="${e(input.email ?? "")}">
  <label for="password">Password</label>
  <input id="password" type="password" name="password" autocomplete="current-password" required>
  <div class="actions">
    <button class="primary" type="submit" name="action" value="login">Log in</button>
  </div>
</form>
</div>`,
    STYLE,
  );
}

export interface SelfServiceScreen {
  action: string;
  csrf: string;
  email?: string | undefined;
  subscriptions: CustomerSubscription[];
  moreUrl?: string | undefined;
  error?: string | undefined;
  /** Which subscription the error is about (shown in its card). */
  errorFor?: string | undefined;
  notice?: string | undefined;
  /** The asset the customer picked before an error, kept checked. */
  selected?: { subscriptionId: string; asset: string } | undefined;
}

export function selfServicePage(screen: SelfServiceScreen): string {
  const cards = screen.subscriptions.map((s) => card(screen, s)).join("\n");
  const generalError = screen.error && !screen.subscriptions.some((s) => s.subscription?.id === screen.errorFor) ? screen.error : undefined;
  return layout(
    "Your subscriptions",
    `<div class="top">
  <h1>Your subscriptions</h1>
  <form method="post" action="${e(screen.action)}">
    <input type="hidden" name="csrf" value="${e(screen.csrf)}">
    ${screen.email ? `<span class="user">${e(screen.email)}</span> ` : ""}<button class="link" type="submit" name="action" value="logout">Log out</button>
  </form>
</div>
${screen.notice ? `<div class="alert info" role="status">${e(screen.notice)}</div>` : ""}
${alert(generalError)}
<div class="list">
${cards || `<div class="card"><div class="status"><p>You have no subscriptions.</p></div></div>`}
</div>
${screen.moreUrl ? `<p class="foot"><a href="${e(screen.moreUrl)}">Older subscriptions</a></p>` : ""}`,
    STYLE,
  );
}

function card(screen: SelfServiceScreen, item: CustomerSubscription): string {
  const sub = item.subscription!;
  const plan = item.plan!;
  const period = every(plan.interval, plan.intervalCount);
  const lines: [string, string][] = [
    ["Status", sub.status],
    ["Paid with", sub.fundingAsset ?? "—"],
  ];
  if (sub.status === "TRIALING") lines.push(["Trial ends", date(sub.trialEnd)]);
  else if (sub.nextBillingAt) lines.push(["Next charge", date(sub.nextBillingAt)]);
  if (sub.status === "PAST_DUE" && sub.nextRetryAt) lines.push(["Next retry", date(sub.nextRetryAt)]);
  if (plan.maximumChargeAmount !== undefined) lines.push(["Maximum per charge", money(plan.maximumChargeAmount, plan.currency)]);
  lines.push(["Since", date(sub.createdAt)]);
  if (sub.cancelledAt) lines.push(["Cancelled", `${date(sub.cancelledAt)}${sub.cancellationReason ? ` (${sub.cancellationReason})` : ""}`]);
  if (sub.expiredAt) lines.push(["Expired", date(sub.expiredAt)]);
  const badge = item.live ? (sub.status === "PAST_DUE" || sub.status === "UNPAID" ? "badge warn" : "badge live") : "badge";
  const error = screen.error && screen.errorFor === sub.id ? alert(screen.error) : "";
  return `<section class="card sub${item.live ? "" : " ended"}" id="subscription-${e(sub.id)}" data-subscription-id="${e(sub.id)}" aria-label="${e(`${plan.name} · ${item.merchantName}`)}">
<div class="head">
  <p class="merchant">${e(item.merchantName)}</p>
  <h2>${e(plan.name)}</h2>
  <p class="price">${e(money(plan.amount, plan.currency))} / ${e(period)}</p>
  <span class="${badge}">${e(sub.status)}</span>
</div>
<div class="summary"><dl>${lines.map(([k, v]) => `<dt>${e(k)}</dt><dd>${e(v)}</dd>`).join("")}</dl></div>
${chargesTable(item.charges)}
${error}
${item.live ? manageForm(screen, item) : ""}
</section>`;
}

function chargesTable(charges: SubscriptionCharge[]): string {
  if (charges.length === 0) return `<div class="charges"><h3>Charges</h3><p class="empty">No charges yet.</p></div>`;
  const rows = charges
    .map(
      (c) =>
        `<tr><td>${e(date(c.createdAt))}</td><td>${e(money(c.amount, c.currency))}</td><td>${e(c.assetAmount !== undefined ? `${c.assetAmount} ${c.asset}` : c.asset)}</td><td>${e(c.status)}${c.failureReason ? ` (${e(c.failureReason)})` : ""}</td><td>${e(refunded(c))}</td></tr>`,
    )
    .join("");
  return `<div class="charges"><h3>Charges</h3><table><thead><tr><th>Date</th><th>Amount</th><th>Paid</th><th>Status</th><th>Refunded</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** Refunds of a charge (refunds/): "—" when none, else the amount back in the plan's currency and in the asset. */
function refunded(c: SubscriptionCharge): string {
  if (!c.amountRefunded || c.amountRefunded === "0") return "—";
  return `${money(c.amountRefunded, c.currency)}${c.assetAmountRefunded ? ` (${c.assetAmountRefunded} ${c.asset})` : ""}`;
}

function manageForm(screen: SelfServiceScreen, item: CustomerSubscription): string {
  const sub = item.subscription!;
  const id = sub.id;
  const picked = screen.selected?.subscriptionId === id ? screen.selected.asset : sub.fundingAsset;
  const options = item.fundingOptions;
  const radios = options.length
    ? `<fieldset><legend>Pay with</legend>
  ${options.map((o) => radio(o, o.asset === picked)).join("\n  ")}
  </fieldset>`
    : "";
  return `<form method="post" action="${e(screen.action)}">
  <input type="hidden" name="csrf" value="${e(screen.csrf)}">
  <input type="hidden" name="subscriptionId" value="${e(id)}">
  ${radios}
  <label for="pin-${e(id)}">Payment PIN</label>
  <input id="pin-${e(id)}" type="password" name="pin" inputmode="numeric" autocomplete="off" maxlength="6" placeholder="6 digits" required>
  <div class="actions row">
    ${options.length ? `<button class="primary" type="submit" name="action" value="change-funding-asset">Pay with the selected asset</button>` : ""}
    <button class="danger" type="submit" name="action" value="cancel-subscription">Cancel subscription</button>
  </div>
</form>`;
}

function radio(o: FundingOption, checked: boolean): string {
  const state = o.frozen ? '<br><span class="low">frozen</span>' : !o.sufficient ? '<br><span class="low">balance below one charge</span>' : "";
  return `<label class="asset">
    <input type="radio" name="fundingAsset" value="${e(o.asset)}"${checked ? " checked" : ""}>
    <span class="meta"><b>${e(o.name)}</b>${e(o.asset)} · ${e(o.network)}<br>Balance: ${e(o.balance)} ${e(o.asset)}</span>
    <span class="due">${e(o.amountDue)} ${e(o.asset)} per charge${state}</span>
  </label>`;
}
