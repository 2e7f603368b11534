import { timingSafeEqual, createHash } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * Internal callers (the gateway, workers, other services, operators' tools)
 * present the shared service token as a bearer token, over gRPC or Connect
 * alike: the RPC port is never an unauthenticated back door.
 */
export function requireServiceToken(token: string): Interceptor {
  const expected = digest(token);
  return (next) => async (req) => {
    const header = req.header.get("authorization") ?? "";
    const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
    if (!presented || !timingSafeEqual(digest(presented), expected)) {
      throw new ConnectError("missing or invalid service token", Code.Unauthenticated);
    }
    return next(req);
  };
}

export function attachServiceToken(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

const digest = (value: string) => createHash("sha256").update(value).digest();
