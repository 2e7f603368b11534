import { MAX_INTEGER_DIGITS } from "../../services/platform/money.ts";
import type { ApprovalSummary, ApprovalView, FundingChoice } from "./approval-provider.ts";

/**
 * Server-rendered HTML for the hosted approval pages: no JavaScript, one form
 * per step, responsive. Every value is escaped. The form field names are a
 * contract for automated browser tests: email, password, fundingAsset, pin,
 * and action = login | approve | cancel | logout.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f7;color:#1c2333}
main{max-width:460px;margin:0 auto;padding:24px 16px 48px}
.card{background:#fff;border-radius:14px;box-shadow:0 1px 3px rgba(16,24,40,.08),0 8px 24px rgba(16,24,40,.06);overflow:hidden}
.head{padding:20px 24px;border-bottom:1px solid #eceef3}
.merchant{font-size:14px;color:#5b6478;margin:0 0 4px}
h1{font-size:22px;margin:0}
.price{font-size:28px;font-weight:700;margin:12px 0 0}
.summary{padding:16px 24px;border-bottom:1px solid #eceef3;background:#fafbfc}
.summary dl{margin:0;display:grid;grid-template-columns:auto 1fr;gap:6px 16px;font-size:14px}
.summary dt{color:#5b6478}.summary dd{margin:0;text-align:right;font-weight:500}
.note{font-size:13px;color:#5b6478;margin:10px 0 0}
form{padding:20px 24px 24px}
label{display:block;font-size:14px;font-weight:600;margin:14px 0 6px}
input[type=email],input[type=password],input[type=text]{width:100%;padding:12px;border:1px solid #cfd4de;border-radius:8px;font-size:16px}
input:focus{outline:2px solid #3b5bdb;outline-offset:1px}
fieldset{border:0;padding:0;margin:0}
legend{font-size:14px;font-weight:600;margin:4px 0 8px}
.asset{display:flex;gap:12px;align-items:center;border:1px solid #cfd4de;border-radius:10px;padding:12px;margin:0 0 8px;cursor:pointer;font-weight:400}
.asset:has(input:checked){border-color:#3b5bdb;background:#f0f3ff}
.asset input{margin:0}
.asset .meta{flex:1;font-size:14px;color:#5b6478}
.asset .meta b{display:block;font-size:15px;color:#1c2333}
.asset .due{font-size:13px;color:#5b6478;text-align:right}
.low{color:#b42318;font-weight:600}
.actions{display:flex;flex-direction:column;gap:10px;margin-top:20px}
button{font:inherit;font-weight:600;border-radius:8px;padding:13px;border:0;cursor:pointer}
.primary{background:#3b5bdb;color:#fff}
.secondary{background:transparent;color:#5b6478;border:1px solid #cfd4de}
.link{background:none;color:#3b5bdb;padding:0;font-weight:500;font-size:14px}
.alert{margin:16px 24px 0;padding:12px 14px;border-radius:8px;font-size:14px;background:#fef3f2;color:#912018;border:1px solid #fecdca}
.info{background:#eff8ff;color:#194185;border-color:#b2ddff}
.user{font-size:14px;color:#5b6478;display:flex;justify-content:space-between;align-items:center;margin:0 0 8px}
.foot{font-size:12px;color:#8a93a6;text-align:center;margin-top:16px}
.status{padding:32px 24px;text-align:center}
.status h1{margin-bottom:8px}
@media (max-width:380px){main{padding:0}.card{border-radius:0}}
`;

/** `extraStyle`: a page's own rules after the shared ones (the self-service list is wider). */
export function layout(title: string, body: string, extraStyle = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}${extraStyle}</style>
</head>
<body><main>${body}<p class="foot">Secured by your wallet provider · Never share your PIN</p></main></body>
</html>`;
}

function summaryBlock(summary: ApprovalSummary, expiresAt: Date): string {
  const rows = summary.lines.map((l) => `<dt>${escapeHtml(l.label)}</dt><dd>${escapeHtml(l.value)}</dd>`).join("");
  return `<div class="head">
  <p class="merchant">${escapeHtml(summary.merchantName)}</p>
  <h1>${escapeHtml(summary.title)}</h1>
  <p class="price">${escapeHtml(summary.price)}</p>
</div>
<div class="summary">
  <dl>${rows}</dl>
  ${summary.note ? `<p class="note">${escapeHtml(summary.note)}</p>` : ""}
  <p class="note">This link expires at ${escapeHtml(formatUtc(expiresAt))}.</p>
</div>`;
}

export function alert(message: string | undefined, kind: "error" | "info" = "error"): string {
  return message ? `<div class="alert${kind === "info" ? " info" : ""}" role="alert">${escapeHtml(message)}</div>` : "";
}

export function loginPage(input: { view: ApprovalView; action: string; csrf: string; error?: string; email?: string }): string {
  const { view } = input;
  return layout(
    `${view.summary.title} · Log in`,
    `<div class="card">
${summaryBlock(view.summary, view.expiresAt)}
${alert(input.error)}
<form method="post" action="${escapeHtml(input.action)}" autocomplete="on">
  <input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
  <p class="note">Log in to your wallet to review and approve.</p>
  <label for="email">Email</label>
  <input id="email" type="email" name="email" autocomplete="username" required value="${escapeHtml(input.email ?? "")}">
  <label for="password">Password</label>
  <input id="password" type="password" name="password" autocomplete="current-password" required>
  <div class="actions">
    <button class="primary" type="submit" name="action" value="login">Log in</button>
    <button class="secondary" type="submit" name="action" value="cancel" formnovalidate>Cancel and return to ${escapeHtml(view.summary.merchantName)}</button>
  </div>
</form>
</div>`,
  );
}

export function fundingPage(input: {
  view: ApprovalView;
  action: string;
  csrf: string;
  choices: FundingChoice[];
  selected?: string;
  error?: string;
  notice?: string;
  email?: string;
}): string {
  const { view, choices } = input;
  const preselected = input.selected ?? choices.find((c) => c.sufficient)?.asset ?? choices[0]?.asset;
  // A fixed asset (a plan change: the subscription's) is still a radio, the only one and checked, so
  // `[name=fundingAsset]` is a radio of asset codes on every approval page (the form contract).
  const fixed = view.fixedFunding === true;
  const options = choices
    .map((c) =>
      fixed
        ? `<label class="asset">
    <input type="radio" name="fundingAsset" value="${escapeHtml(c.asset)}" checked required>
    <span class="meta"><b>${escapeHtml(c.name)}</b>${escapeHtml(c.asset)} · ${escapeHtml(c.network)}<br>Balance: ${escapeHtml(c.balance)} ${escapeHtml(c.asset)}</span>
    <span class="due">Due now: ${escapeHtml(c.amountDue)} ${escapeHtml(c.asset)}${c.frozen ? '<br><span class="low">frozen</span>' : !c.sufficient ? '<br><span class="low">insufficient balance</span>' : ""}</span>
  </label>`
        : `<label class="asset">
    <input type="radio" name="fundingAsset" value="${escapeHtml(c.asset)}"${c.asset === preselected ? " checked" : ""} required>
    <span class="meta"><b>${escapeHtml(c.name)}</b>${escapeHtml(c.asset)} · ${escapeHtml(c.network)}<br>Balance: ${escapeHtml(c.balance)} ${escapeHtml(c.asset)}</span>
    <span class="due">${escapeHtml(c.amountDue)} ${escapeHtml(c.asset)}${c.frozen ? '<br><span class="low">frozen</span>' : !c.sufficient ? '<br><span class="low">insufficient balance</span>' : ""}</span>
  </label>`,
    )
    .join("\n");
  const body = choices.length
    ? `<fieldset><legend>${fixed ? "Paid from" : "Pay with"}</legend>
  ${options}
  </fieldset>
  <label for="pin">Payment PIN</label>
  <input id="pin" type="password" name="pin" inputmode="numeric" autocomplete="off" maxlength="6" placeholder="6 digits" required>`
    : `<p class="alert">Your wallet has no account that can pay this. Add funds to your wallet, then come back to this page.</p>`;
  return layout(
    `${view.summary.title} · Approve`,
    `<div class="card">
${summaryBlock(view.summary, view.expiresAt)}
${alert(input.notice, "info")}
${alert(input.error)}
<form method="post" action="${escapeHtml(input.action)}">
  <input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
  ${input.email ? `<p class="user">Signed in as ${escapeHtml(input.email)}</p>` : ""}
  ${body}
  <div class="actions">
    ${choices.length ? `<button class="primary" type="submit" name="action" value="approve">${escapeHtml(view.summary.approveLabel)}</button>` : ""}
    <button class="secondary" type="submit" name="action" value="cancel" formnovalidate>Cancel and return to ${escapeHtml(view.summary.merchantName)}</button>
    <button class="link" type="submit" name="action" value="logout" formnovalidate>Not you? Log in with another account</button>
  </div>
</form>
</div>`,
  );
}

/** An asset that cannot hold a price once converted (ASSET_AMOUNT_TOO_LARGE), in words, with the limit. */
export function tooLargeSentence(postedAsset: string): string {
  const limit = `1${"0".repeat(MAX_INTEGER_DIGITS)}`.replace(/\B(?=(\d{3})+$)/g, ",");
  // The asset comes from the form: named only when it looks like an asset code.
  const asset = /^[A-Z0-9_]{1,16}$/.test(postedAsset) ? postedAsset : undefined;
  return asset
    ? `Paid in ${asset}, this price would be more than one payment can hold (it must be less than ${limit} ${asset}). Choose another asset.`
    : `Paid in this asset, this price would be more than one payment can hold (it must be less than ${limit}). Choose another asset.`;
}

export function statusPage(title: string, message: string): string {
  return layout(title, `<div class="card"><div class="status"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></div></div>`);
}

export function formatUtc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
