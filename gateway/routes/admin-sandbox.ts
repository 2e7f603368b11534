import { isoFromTimestamp } from "../../services/platform/timestamps.ts";
import { defineRoutes } from "../route.ts";

const clockSchema = {
  type: "object",
  required: ["now", "offsetSeconds"],
  properties: { now: { type: "string", format: "date-time" }, offsetSeconds: { type: "integer" } },
} as const;

/** Sandbox-only: outside SANDBOX=true these answer 404 like any unknown path (before auth and validation). */
const sandboxOnly = (config: { sandbox: boolean }) => config.sandbox;

export const adminSandboxRoutes = defineRoutes([
  {
    method: "get",
    path: "/admin/v1/sandbox/clock",
    operationId: "adminGetSandboxClock",
    summary: "Current service time (sandbox mode only)",
    tag: "Operator",
    auth: "admin",
    available: sandboxOnly,
    errors: [404],
    responses: { 200: { description: "The service clock", schema: clockSchema } },
    async handler(_input, { clients }) {
      const res = await clients.sandbox.getClock({});
      return { status: 200, body: { now: isoFromTimestamp(res.now!), offsetSeconds: Number(res.offsetSeconds) } };
    },
  },
  {
    method: "post",
    path: "/admin/v1/sandbox/clock/advance",
    operationId: "adminAdvanceSandboxClock",
    summary: "Move the service clock forward for every process (sandbox mode only)",
    description: "Everything that became due (expiries, renewals, scheduled changes, webhook retries) runs within seconds.",
    tag: "Operator",
    auth: "admin",
    available: sandboxOnly,
    errors: [404],
    body: {
      type: "object",
      additionalProperties: false,
      required: ["seconds"],
      properties: {
        seconds: {
          type: "integer",
          minimum: 1,
          maximum: 5 * 366 * 24 * 3600,
          description: "Whole seconds, 1 to 5 years; a fraction is a 400 naming this rule.",
        },
      },
    },
    responses: { 200: { description: "The service clock after the move", schema: clockSchema } },
    async handler({ body }, { clients }) {
      const res = await clients.sandbox.advanceClock({ seconds: BigInt(body.seconds) });
      return { status: 200, body: { now: isoFromTimestamp(res.now!), offsetSeconds: Number(res.offsetSeconds) } };
    },
  },
]);
