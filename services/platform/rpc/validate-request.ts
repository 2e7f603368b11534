import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { invalid, notFound } from "../errors.ts";
import { isUuid } from "../ids.ts";
import { timestampProblem } from "../timestamps.ts";

interface RequestValidationOptions {
  /** Whether a merchant with this (well-formed) id exists. */
  merchantExists(id: string): Promise<boolean>;
}

/**
 * Checks every request before any use case runs, from the message's own
 * descriptor, so each RPC needs no code of its own for it:
 * - every string (at any depth) is storable text: no NUL, no unpaired
 *   surrogate (Postgres refuses both) → INVALID_ARGUMENT naming the field;
 * - every Timestamp is an instant PostgreSQL and a JavaScript Date hold
 *   (years 0001–9999, nanos 0–999999999) → INVALID_ARGUMENT naming the field
 *   (an out-of-range `created_after` was an INTERNAL);
 * - `merchant_id`, the scope of every merchant call, must be a uuid
 *   (INVALID_ARGUMENT naming it) of an existing merchant (NOT_FOUND).
 * Other ids are the use cases' concern: a malformed target id is simply not
 * found (404 at the edge), a malformed reference names its field.
 */
export function validateRequests(options: RequestValidationOptions): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      checkFields(req.method.input, req.message as unknown as Record<string, unknown>, "");
      const merchantField = req.method.input.fields.find((f) => f.name === "merchant_id" && f.fieldKind === "scalar" && !f.oneof);
      if (merchantField) {
        const merchantId = (req.message as unknown as Record<string, unknown>)[merchantField.localName];
        if (typeof merchantId === "string") {
          if (!isUuid(merchantId)) throw invalid("INVALID_REQUEST", `${merchantField.jsonName}: must be a uuid`);
          if (!(await options.merchantExists(merchantId.toLowerCase()))) {
            throw notFound("MERCHANT_NOT_FOUND", `${merchantField.jsonName}: no merchant ${merchantId}`);
          }
        }
      }
    }
    return next(req);
  };
}

function checkFields(desc: DescMessage, message: Record<string, unknown> | undefined, prefix: string, depth = 0): void {
  if (!message || depth > 32) return;
  for (const field of desc.fields) {
    const value = valueOf(field, message);
    if (value === undefined || value === null) continue;
    const path = `${prefix}${field.jsonName}`;
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING) checkString(value as string, path);
    else if (field.fieldKind === "message") checkMessage(field.message, value as Record<string, unknown>, path, depth + 1);
    else if (field.fieldKind === "list" && field.listKind === "scalar" && field.scalar === ScalarType.STRING) {
      (value as string[]).forEach((item, i) => checkString(item, `${path}[${i}]`));
    } else if (field.fieldKind === "list" && field.listKind === "message") {
      (value as Record<string, unknown>[]).forEach((item, i) => checkMessage(field.message, item, `${path}[${i}]`, depth + 1));
    } else if (field.fieldKind === "map") {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        checkString(key, `${path} key`);
        if (typeof item === "string") checkString(item, `${path}.${key}`);
      }
    }
  }
}

function checkMessage(desc: DescMessage, message: Record<string, unknown>, path: string, depth: number): void {
  if (desc.typeName === "google.protobuf.Timestamp") {
    const problem = timestampProblem(message as unknown as Timestamp);
    if (problem) throw invalid("INVALID_REQUEST", `${path}: ${problem}`);
    return;
  }
  checkFields(desc, message, `${path}.`, depth);
}

function valueOf(field: DescField, message: Record<string, unknown>): unknown {
  if (!field.oneof) return message[field.localName];
  const group = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
  return group?.case === field.localName ? group.value : undefined;
}

function checkString(value: string, field: string): void {
  if (value.includes("\u0000")) throw invalid("INVALID_REQUEST", `${field}: must not contain the NUL character (U+0000)`);
  if (!value.isWellFormed()) throw invalid("INVALID_REQUEST", `${field}: must be well-formed Unicode (no unpaired surrogates)`);
}
