import type { ParameterizedContext } from "koa";
import type { GatewayDeps } from "./deps.ts";
import type { Config } from "../services/platform/config.ts";
import type { GatewayState } from "./state.ts";

export type JsonSchema = Record<string, unknown>;

export type { GatewayState };

export type GatewayContext = ParameterizedContext<GatewayState>;

interface RouteInput {
  body: any;
  query: any;
  params: Record<string, string>;
  merchantId: string;
}

interface RouteResult {
  status: number;
  /** A value to answer as JSON, or JsonText: JSON already serialized (sent as it is). */
  body?: unknown;
}

/**
 * A body that is already JSON text (a service's record_json): answered as it
 * is, with the JSON content type, instead of being parsed only to be
 * serialized again. Not for idempotent routes (their stored result is a value).
 */
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A body that is not JSON (a PDF): answered with its content type and extra headers as they are. */
export class BinaryBody {
  readonly contentType: string;
  readonly bytes: Uint8Array;
  readonly headers: Record<string, string>;
  constructor(contentType: string, bytes: Uint8Array, headers: Record<string, string> = {}) {
    this.contentType = contentType;
    this.bytes = bytes;
    this.headers = headers;
  }
}

interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** A non-JSON response (BinaryBody): documented as this media type, a binary string. */
  contentType?: string;
}

/**
 * One declaration per REST operation: the gateway mounts it (auth, validation,
 * handler) and the OpenAPI document is built from the very same object.
 */
export interface RouteSpec {
  method: "get" | "post" | "patch" | "delete";
  /** Koa path syntax (`/api/v1/things/:id`). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: "apiKey" | "admin" | "none";
  /** When given and false for the running config, the operation answers 404 before anything else (as if not mounted). */
  available?: (config: Config) => boolean;
  body?: JsonSchema;
  query?: JsonSchema;
  /** Honours the Idempotency-Key header (replays the first response). */
  idempotent?: boolean;
  responses: Record<number, ResponseSpec>;
  /** Error statuses its services can answer (those of the middleware chain are derived: openapi/error-statuses.ts). */
  errors?: number[];
  handler(input: RouteInput, deps: GatewayDeps, ctx: GatewayContext): Promise<RouteResult>;
}

export const defineRoutes = (routes: RouteSpec[]): RouteSpec[] => routes;
