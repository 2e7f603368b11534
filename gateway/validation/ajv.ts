import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { exceedsStorage, MAX_INTEGER_DIGITS } from "../../services/platform/money.ts";
import { DATE_TIME_RULE, readDateTime } from "./date-time.ts";

/**
 * Two AJV instances: bodies are validated strictly (no type coercion, defaults
 * applied), query strings with coercion since every query value is text.
 * The custom keyword `x-storable-amount` bounds amounts to what numeric(38,18)
 * holds, so a huge but pattern-valid amount is a 400, not a database error;
 * the `date-time` format is likewise narrowed to instants the stack can hold.
 */
function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes, strict: true, strictRequired: false });
  addFormats.default(ajv);
  // Replaces ajv-formats' date-time: every date-time field, query or body, takes only what the stack can hold.
  ajv.addFormat("date-time", { type: "string", validate: (text: string) => readDateTime(text) !== undefined });
  ajv.addKeyword({
    keyword: "x-storable-amount",
    type: "string",
    schemaType: "boolean",
    errors: true,
    validate: function storable(enabled: boolean, data: string) {
      if (!enabled || !exceedsStorage(data)) return true;
      (storable as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: "x-storable-amount", message: `must be less than 10^${MAX_INTEGER_DIGITS}`, params: {} },
      ];
      return false;
    },
  });
  // A field that exists on the resource but may not be sent here (a plan's price on PATCH):
  // present → 400 naming it, with the schema's own sentence saying why.
  ajv.addKeyword({
    keyword: "x-immutable",
    schemaType: "string",
    errors: true,
    validate: function immutable(message: string) {
      (immutable as unknown as { errors: Partial<ErrorObject>[] }).errors = [{ keyword: "x-immutable", message, params: {} }];
      return false;
    },
  });
  return ajv;
}

const bodyAjv = createAjv(false);
const queryAjv = createAjv(true);

export function compileBody(schema: object): ValidateFunction {
  return bodyAjv.compile(schema);
}

export function compileQuery(schema: object): ValidateFunction {
  return queryAjv.compile(schema);
}

interface FieldProblem {
  field: string;
  rule: string;
  message: string;
}

/** AJV errors → one message that names each field and its rule, plus details. */
export function describeErrors(errors: ErrorObject[] | null | undefined, root: string): { message: string; details: FieldProblem[] } {
  const details = (errors ?? []).map((e) => {
    const path = e.instancePath.replace(/^\//, "").replace(/\//g, ".");
    let field = path || root;
    let message = e.message ?? "is invalid";
    if (e.keyword === "required") {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      field = path ? `${path}.${missing}` : missing;
      message = "is required";
    } else if (e.keyword === "additionalProperties") {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      field = path ? `${path}.${extra}` : extra;
      message = "is not a known field";
    } else if (e.keyword === "enum") {
      message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`;
    } else if (e.keyword === "format" && (e.params as { format: string }).format === "date-time") {
      message = DATE_TIME_RULE;
    } else if (e.keyword === "pattern") {
      message = `must match the pattern ${(e.params as { pattern: string }).pattern}`;
    } else if (e.keyword === "type" && (e.params as { type: string }).type === "integer") {
      message = "must be a whole number (an integer, no fraction)";
    } else if (e.keyword === "type" && e.instancePath === "") {
      message = `must be ${(e.params as { type: string }).type}`;
    }
    return { field, rule: e.keyword, message: `${field}: ${message}` };
  });
  // The same field may fail several rules (type and pattern); keep the first per field for the message.
  const seen = new Set<string>();
  const parts = details.filter((d) => !seen.has(d.field) && seen.add(d.field)).map((d) => d.message);
  return { message: parts.join("; ") || `${root}: is invalid`, details };
}
