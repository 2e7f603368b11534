import { AsyncLocalStorage } from "node:async_hooks";

/** Who did it: the four kinds of the audit entry's `actor`. */
export type ActorType = "member" | "api_key" | "operator" | "customer";

export interface Actor {
  type: ActorType;
  id: string;
  label: string;
}

/** The audit entry a call will write (the audited-methods table says what; the use case may add where). */
export interface PendingEntry {
  action: string;
  objectType: string;
  /** The entity whose first created or changed row names the object and merchant (audited-methods.ts). */
  entity: string | undefined;
  objectId: string | undefined;
  merchantId: string | undefined;
  /** A member acting on themself before any session exists (accepting an invite, enrolling TOTP): the actor when none is known. */
  selfActor: boolean;
  /** The object's email when it is a member (the self actor's label). */
  objectLabel?: string | undefined;
  /** Set while a transaction carrying the entry commits, kept once it did: exactly one entry per call. */
  state: "pending" | "writing" | "written";
}

/**
 * Who is acting on this request or RPC call, and from where. The gateway
 * opens one per HTTP request (its middleware fill in the actor as they
 * authenticate it); the services open one per RPC call from the headers the
 * gateway's clients send. One mutable object per call, read through
 * AsyncLocalStorage, so no function signature between the edge and the
 * transaction has to carry it.
 */
export interface CallContext {
  actor: Actor | undefined;
  ip: string | undefined;
  userAgent: string | undefined;
  requestId: string | undefined;
  /** Services side only: the entry this call owes, when its method is audited. */
  entry?: PendingEntry | undefined;
  /** Services side only: this call runs inside another audited call (that one's entry covers it). */
  nested?: boolean;
  /** Transactions run under `withoutAuditEntry` do not carry the call's entry (see there). */
  quiet?: boolean;
}

const storage = new AsyncLocalStorage<CallContext>();

export const currentCall = (): CallContext | undefined => storage.getStore();

export function runInCall<T>(context: CallContext, fn: () => T): T {
  return storage.run(context, fn);
}

/**
 * Runs `fn` so that its transactions do not carry the call's pending audit
 * entry: a wallet call's settle records money that already moved, and must
 * neither wait on nor fail because of an audit insert (a failed settle answers
 * "try again" for money that moved). The entry stays pending; the call's own
 * opening transaction, or the after-success write, records it.
 */
export function withoutAuditEntry<T>(fn: () => T): T {
  const call = storage.getStore();
  return call ? storage.run({ ...call, quiet: true }, fn) : fn();
}

/** The gateway's authenticating middleware say who the caller is. */
export function setActor(actor: Actor): void {
  const call = storage.getStore();
  if (call) call.actor = actor;
}

/**
 * This audited call changed nothing after all (a retried create answered with
 * what the first attempt made, whose entry was written then): it owes no entry.
 */
export function owesNoAuditEntry(): void {
  const entry = storage.getStore()?.entry;
  if (entry?.state === "pending") entry.state = "written";
}

/**
 * A row of `entityName` this call acts on: when the call's audited action is
 * about that entity (audited-methods.ts `entity`) and its request did not
 * name the object or the merchant, the row does. The audit subscriber calls
 * it for rows the unit of work writes; code that finds its object by token
 * or writes it with plain SQL calls it itself. Does nothing outside an
 * audited call (jobs, reads) or for another entity.
 */
export function noteAuditObject(entityName: string, row: { id?: unknown; merchantId?: unknown; email?: unknown }): void {
  const entry = storage.getStore()?.entry;
  if (!entry || entry.state === "written" || entry.entity !== entityName) return;
  if (!entry.objectId && typeof row.id === "string") entry.objectId = row.id;
  if (entry.objectId === row.id && typeof row.email === "string") entry.objectLabel = row.email;
  if (!entry.merchantId && typeof row.merchantId === "string") entry.merchantId = row.merchantId;
}
