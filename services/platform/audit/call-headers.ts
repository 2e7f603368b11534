import type { Interceptor } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Orm } from "../database/orm.ts";
import { currentCall, runInCall, type Actor, type ActorType, type CallContext } from "./call-context.ts";
import { methodAudit } from "./audited-methods.ts";
import type { Logger } from "../logger.ts";
import { fieldsOf, insertAuditEntry } from "./audit-writer.ts";

/**
 * The call context travels as request headers from the gateway's clients to
 * the services (and from a service to the services it calls). Values are
 * percent-encoded: a user agent or a label may hold what a header cannot.
 */
const H = {
  actorType: "x-audit-actor-type",
  actorId: "x-audit-actor-id",
  actorLabel: "x-audit-actor-label",
  ip: "x-audit-ip",
  userAgent: "x-audit-user-agent",
  requestId: "x-audit-request-id",
  /** Sent by a service calling another inside an audited call: that call's entry covers this one. */
  within: "x-audit-within",
} as const;

const ACTOR_TYPES: readonly ActorType[] = ["member", "api_key", "operator", "customer"];
const MAX_TEXT = 500;

const put = (header: Headers, name: string, value: string | undefined) => {
  if (value) header.set(name, encodeURIComponent(value.slice(0, MAX_TEXT)));
};
const take = (header: Headers, name: string): string | undefined => {
  const raw = header.get(name);
  if (!raw) return undefined;
  try {
    return decodeURIComponent(raw).slice(0, MAX_TEXT);
  } catch {
    return undefined;
  }
};

/** Client side (every RpcClients): the current call's actor and origin, on every outgoing RPC. */
export function propagateCallContext(): Interceptor {
  return (next) => async (req) => {
    const call = currentCall();
    if (call) {
      if (call.actor) {
        put(req.header, H.actorType, call.actor.type);
        put(req.header, H.actorId, call.actor.id);
        put(req.header, H.actorLabel, call.actor.label);
      }
      put(req.header, H.ip, call.ip);
      put(req.header, H.userAgent, call.userAgent);
      put(req.header, H.requestId, call.requestId);
      if (call.entry || call.nested) req.header.set(H.within, "1");
    }
    return next(req);
  };
}

function actorFrom(header: Headers): Actor | undefined {
  const type = take(header, H.actorType) as ActorType | undefined;
  const id = take(header, H.actorId);
  if (!type || !ACTOR_TYPES.includes(type) || !id) return undefined;
  return { type, id, label: take(header, H.actorLabel) ?? "" };
}

/**
 * Server side: every RPC call runs in its own call context read from the
 * headers. An audited method (audited-methods.ts) called on its own, not
 * within another audited call, owes one entry: the audit subscriber writes it
 * in the call's first committed transaction; a call that succeeded without
 * committing one (its change was made by the services it called) writes it
 * here, after success. A failed call writes none.
 */
export function auditCalls(orm: Orm, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const header = req.header;
    const nested = header.get(H.within) === "1";
    const audit = methodAudit(req.service.typeName, req.method.name);
    const context: CallContext = {
      actor: actorFrom(header),
      ip: take(header, H.ip),
      userAgent: take(header, H.userAgent),
      requestId: take(header, H.requestId),
      nested,
    };
    if (!nested && typeof audit === "object" && !req.stream) {
      const message = req.message as Record<string, unknown>;
      const field = (name: string | undefined) => (name && typeof message[name] === "string" && message[name] ? (message[name] as string) : undefined);
      context.entry = {
        action: audit.action,
        objectType: audit.objectType,
        entity: audit.entity,
        objectId: field(audit.objectField),
        merchantId: field("merchantId"),
        selfActor: audit.selfActor === true,
        state: "pending",
      };
    }
    return runInCall(context, async () => {
      const res = await next(req);
      const entry = context.entry;
      if (entry && entry.state !== "written") {
        entry.state = "written";
        // One statement, autocommitted (no transaction event: the subscriber stays out of it). Best effort: the
        // action succeeded and is answered as such; a lost entry is logged, never turned into an error answer.
        try {
          await insertAuditEntry(orm.em.fork() as EntityManager, fieldsOf(context, entry));
        } catch (err) {
          logger.error({ err, action: entry.action, requestId: context.requestId }, "audit entry not written after a successful call");
        }
      }
      return res;
    });
  };
}
