/**
 * How a public record crosses gRPC to the gateway. The service builds each
 * merchant-facing record once (`services/<domain>/*-record.ts`: REST body and
 * event data); its message carries that record as JSON text in `record_json`
 * next to the typed fields internal callers read, and the gateway answers
 * with the record as it is. A new REST field is written once, in the record.
 */
export function withRecordJson<M extends object>(message: M, record: object): M & { recordJson: string } {
  return { ...message, recordJson: JSON.stringify(record) };
}

/** The record a message carries (the REST body). A message without one is a service bug, not a client error. */
export function recordOf(message: { recordJson: string } | undefined): Record<string, unknown> {
  if (!message?.recordJson) throw new Error("the service answered without the record (record_json is empty)");
  return JSON.parse(message.recordJson) as Record<string, unknown>;
}

/** The record a message carries, as its JSON text (a REST body sent as it is). */
export function recordJsonOf(message: { recordJson: string } | undefined): string {
  if (!message?.recordJson) throw new Error("the service answered without the record (record_json is empty)");
  return message.recordJson;
}
