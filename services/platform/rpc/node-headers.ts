import type { IncomingHttpHeaders } from "node:http2";

/** Node's HTTP/2 headers as web Headers, pseudo-headers (`:path`, `:status`…) left out: what Connect's interceptors and codecs read. */
export function webHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (name.charCodeAt(0) === COLON || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, String(value));
  }
  return out;
}

const COLON = ":".charCodeAt(0);
