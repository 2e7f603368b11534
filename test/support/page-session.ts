import { SESSION_COOKIE } from "../../gateway/pages/page-session.ts";

/**
 * A hosted page driven over plain HTTP, as a browser without JavaScript
 * would: the session cookie kept between requests, the CSRF token read from
 * the page's form. For page behaviour that needs no rendering engine.
 */
export interface PageSessionClient {
  get(pathAndQuery: string): Promise<{ status: number; html: string }>;
  /** Posts a form (with the current CSRF token); redirects are not followed. */
  post(form: Record<string, string>): Promise<{ status: number; location: string | null; html: string }>;
}

export async function pageSession(baseUrl: string, path: string): Promise<PageSessionClient> {
  let cookie = "";
  let csrf = "";
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      if (pair?.startsWith(`${SESSION_COOKIE}=`)) cookie = pair;
    }
  };
  const readCsrf = (html: string) => {
    const found = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    if (found) csrf = found;
  };
  const client: PageSessionClient = {
    async get(pathAndQuery) {
      const res = await fetch(`${baseUrl}${pathAndQuery}`, { headers: cookie ? { cookie } : {}, redirect: "manual" });
      remember(res);
      const html = await res.text();
      readCsrf(html);
      return { status: res.status, html };
    },
    async post(form) {
      const res = await fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie && { cookie }) },
        body: new URLSearchParams({ csrf, ...form }).toString(),
        redirect: "manual",
      });
      remember(res);
      return { status: res.status, location: res.headers.get("location"), html: await res.text() };
    },
  };
  await client.get(path);
  return client;
}

/** Logs in on a self-service page session with the wallet user's email and password. */
export async function logIn(page: PageSessionClient, email: string, password: string): Promise<void> {
  const res = await page.post({ action: "login", email, password });
  if (res.status !== 303) throw new Error(`login failed: ${res.status} ${res.html.slice(0, 200)}`);
}
