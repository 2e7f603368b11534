import type { Middleware } from "koa";
import proxyaddr from "proxy-addr";
import type { TrustProxy } from "../../services/platform/config.ts";

const FORWARDED_HEADERS = ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"];

/**
 * Decides `ctx.ip` (used by the hosted pages' per-address login limit) from
 * TRUST_PROXY. Off (the default): the socket's peer, whatever X-Forwarded-For
 * says. A hop count: that many proxies in front, the address just before them.
 * A list: the nearest address outside the listed proxies/CIDRs. Forwarded
 * headers from a peer that is not trusted are dropped, so neither the address
 * nor X-Forwarded-Proto/-Host can be picked by a client. (proxy-addr is
 * Express's implementation of the same rule.)
 */
export function clientAddress(trust: TrustProxy): Middleware {
  if (trust === false) {
    return async (ctx, next) => {
      ctx.request.ip = ctx.req.socket.remoteAddress ?? "";
      await next();
    };
  }
  const trusted = typeof trust === "number" ? (_addr: string, hop: number) => hop < trust : proxyaddr.compile([...trust]);
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? "";
    if (!trusted(peer, 0)) for (const h of FORWARDED_HEADERS) delete ctx.req.headers[h];
    ctx.request.ip = proxyaddr(ctx.req, trusted);
    await next();
  };
}
