import type { TestSystem } from "./system.ts";
import type { WalletUserFixture } from "./subscriptions.ts";

/**
 * A hosted approval page driven over plain HTTP, as a browser without
 * JavaScript would: the session cookie kept between requests, the CSRF token
 * read from the form, fields posted as application/x-www-form-urlencoded.
 */
export interface PageAnswer {
  status: number;
  html: string;
  location: string | null;
}

export interface HostedPage {
  get(): Promise<PageAnswer>;
  /** Reads the form's CSRF token from a fresh GET, then posts `fields` with it. */
  post(fields: Record<string, string>): Promise<PageAnswer>;
  /** Logs in as `user`; throws unless the page answers with its redirect. */
  logIn(user: WalletUserFixture): Promise<void>;
}

export function hostedPage(sys: TestSystem, path: string): HostedPage {
  const cookies = new Map<string, string>();
  async function send(method: "GET" | "POST", fields?: Record<string, string>): Promise<PageAnswer> {
    const headers: Record<string, string> = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
    if (fields) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetch(`${sys.baseUrl}${path}`, { method, headers, body: fields && new URLSearchParams(fields).toString(), redirect: "manual" });
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(";")[0]!;
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return { status: res.status, html: await res.text(), location: res.headers.get("location") };
  }
  const page: HostedPage = {
    get: () => send("GET"),
    async post(fields) {
      const form = await send("GET");
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.html)?.[1];
      if (!csrf) throw new Error(`no form on ${path}: ${form.status} ${form.html.slice(0, 200)}`);
      return send("POST", { csrf, ...fields });
    },
    async logIn(user) {
      const res = await page.post({ action: "login", email: user.email, password: user.password });
      if (res.status !== 303) throw new Error(`login failed: ${res.status} ${res.html.slice(0, 300)}`);
    },
  };
  return page;
}

/** The text of a page's alert (error or notice), unescaped enough to compare. */
export function alertOf(html: string): string | undefined {
  const text = /role="alert">([^<]*)</.exec(html)?.[1];
  return text
    ?.replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
