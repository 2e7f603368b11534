/**
 * `npm run bench:export-memory` (issue 24, Exports): the peak RSS of the
 * gateway and the services (one process, RPC in process, as `billing start`
 * runs them) while /dashboard/exports/charges.csv streams BENCH_EXPORT_ROWS
 * (default 1,000,000) charge rows seeded with generate_series, against the
 * same export of a tenth as many rows: flat memory means the two peaks are
 * alike, not ten times apart. The client counts the bytes and keeps none.
 * Prints the figures (docs/hosted-pages.md#exports keeps the last ones). Not part of CI.
 * Needs DATABASE_URL and REDIS_URL.
 */
import pg from "pg";
import { startTestSystem, type TestSystem } from "../support/system.ts";
import { PASSWORD, totpCode, uniqueEmail } from "../support/dashboard.ts";
import { approvedSubscription } from "../support/billing.ts";
import { subscriptionsRpc } from "../support/subscriptions.ts";

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const log = (s: string) => process.stderr.write(`[export-memory] ${s}\n`);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** A cookie jar over fetch: the dashboard's forms, as a browser without JavaScript posts them. */
function browserLike(baseUrl: string) {
  const cookies = new Map<string, string>();
  return async (path: string, form?: Record<string, string>) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: form ? "POST" : "GET",
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "), ...(form && { "content-type": "application/x-www-form-urlencoded" }) },
      body: form && new URLSearchParams(form).toString(),
      redirect: "manual",
    });
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(";")[0]!;
      cookies.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    return res;
  };
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

/** An OWNER signed in to the dashboard: invite → password → TOTP, over plain HTTP. */
async function signedInOwner(sys: TestSystem, merchantId: string) {
  const invited = await sys.admin.post(`/admin/v1/merchants/${merchantId}/members`, { email: uniqueEmail("owner"), role: "OWNER" });
  const go = browserLike(sys.baseUrl);
  const invitePath = new URL(invited.body.inviteUrl).pathname;
  const invitePage = await (await go(invitePath)).text();
  await go(invitePath, { csrf: csrfOf(invitePage), password: PASSWORD, action: "accept-invite" });
  const enrol = await (await go("/dashboard/two-factor")).text();
  const secret = /data-totp-secret="([A-Z2-7]+)"/.exec(enrol)![1]!;
  const enabled = await go("/dashboard/two-factor", { csrf: csrfOf(enrol), totp: totpCode(secret), action: "enable-totp" });
  if (enabled.status !== 200) throw new Error(`enrolment failed: ${enabled.status}`);
  return go;
}

/**
 * Inserts `count` SUCCEEDED charges of one subscription, spread over the last 360 days, in one statement
 * (its own connection: the services' statement timeout is meant for requests, not a bulk load).
 */
async function seed(sys: TestSystem, sample: { id: string; merchant_id: string; wallet_user_id: string }, count: number, offset: number) {
  const client = new pg.Client({ connectionString: sys.database.url });
  await client.connect();
  const params = [sample.id, sample.merchant_id, sample.wallet_user_id, offset + 1, offset + count, ROWS];
  await client.query(
    `insert into subscription_charges (id, subscription_id, merchant_id, wallet_user_id, period_index, period_start, period_end, amount, currency,
                                       asset, asset_amount, rate, status, attempt, created_at, settled_at, purpose, amount_refunded, asset_amount_refunded)
     select gen_random_uuid(), $1, $2, $3, 1000 + g, t, t + interval '30 days', 9.99, 'USD', 'USDT_TRON', 9.99, 1, 'SUCCEEDED', 1, t, t, 'RENEWAL',
            case when g % 50 = 0 then 1.5 else 0 end, case when g % 50 = 0 then 1.5 else 0 end
       from generate_series($4::int, $5::int) g, lateral (select now() - interval '360 days' + g * interval '1 second' * (31000000.0 / $6) as t) times`,
    params,
  );
  await client.query("analyze subscription_charges");
  await client.end();
}

/** Downloads the year's charges; RSS sampled every 20 ms meanwhile. */
async function exportOnce(go: ReturnType<typeof browserLike>) {
  const from = new Date(Date.now() - 366 * 86_400_000).toISOString().slice(0, 10);
  const to = new Date().toISOString().slice(0, 10);
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const res = await go(`/dashboard/exports/charges.csv?from=${from}&to=${to}`);
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body!) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
  }
  clearInterval(sampler);
  return { rows: lines - 1, bytes, seconds: (performance.now() - started) / 1000, before, peak };
}

const sys = await startTestSystem({ workerGroups: [] });
const rpc = subscriptionsRpc(sys);
try {
  const merchant = await sys.createMerchant("Export bench");
  const { subscriptionId } = await approvedSubscription(sys, merchant.api, rpc.client, { plan: { amount: "9.99", currency: "USD" } });
  const [sample] = await sys.sql("select id, merchant_id, wallet_user_id from subscriptions where id = ?", [subscriptionId]);
  const go = await signedInOwner(sys, merchant.id);
  const results = [];
  let seeded = 0;
  for (const target of [Math.round(ROWS / 10), ROWS]) {
    log(`seeding to ${target} rows`);
    await seed(sys, sample, target - seeded, seeded);
    seeded = target;
    log(`exporting ${target} rows`);
    results.push({ target, ...(await exportOnce(go)) });
  }
  console.log("\nExport of charges.csv (gateway + services in one process, RPC in process)");
  console.log("rows exported | CSV size | time | rows/s | RSS before | peak RSS | peak - before");
  for (const r of results) {
    console.log(
      `${r.rows} | ${mb(r.bytes)} | ${r.seconds.toFixed(1)} s | ${Math.round(r.rows / r.seconds)} | ${mb(r.before)} | ${mb(r.peak)} | ${mb(r.peak - r.before)}`,
    );
  }
} finally {
  rpc.close();
  await sys.close();
}
