import { expect } from "chai";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { EventsService } from "../../proto/gen/billing/events/v1/events_pb.ts";
import { WalletService } from "../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { createGatewayApp } from "../../gateway/app.ts";
import type { GatewayDeps } from "../../gateway/deps.ts";
import { defineRoutes } from "../../gateway/route.ts";
import { dateTimeSchema } from "../../gateway/schemas/common.ts";
import { parseDateTime } from "../../gateway/validation/date-time.ts";
import { loadConfig } from "../../services/platform/config.ts";
import { createLogger } from "../../services/platform/logger.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";
import { useTestSystem } from "../support/system.ts";
import { apiClient, type ApiClient } from "../support/http.ts";

/**
 * Spellings ajv's date-time format accepts that a JavaScript Date or
 * PostgreSQL cannot hold: each was a 500 on GET /api/v1/balance-transactions.
 */
const UNREPRESENTABLE = [
  "2016-12-31T23:59:60Z", // leap second
  "2016-12-31T23:59:60+00:00",
  "2016-12-31T23:59:60.5Z",
  "2016-12-31T23:59:60.999999-00:00",
  "2017-01-01T00:59:60+01:00", // the same leap second in local time
  "2020-01-01T00:00:00+05", // offset without minutes
  "2020-01-01T00:00:00+0530", // offset without the colon
  "0000-01-01T00:00:00Z", // year 0000
  "0000-12-31T23:59:59+00:00",
  "0001-01-01T00:00:00+01:00", // year 0000 in UTC
  "9999-12-31T23:59:59-01:00", // year 10000 in UTC
];

/** Still accepted, and read as the instant they name. */
const ACCEPTED: [string, string][] = [
  ["2016-12-31T23:59:59Z", "2016-12-31T23:59:59.000Z"],
  ["2020-01-01T05:30:00+05:30", "2020-01-01T00:00:00.000Z"],
  ["2020-01-01t00:00:00.123456789z", "2020-01-01T00:00:00.123Z"],
  ["2020-01-01 00:00:00-00:00", "2020-01-01T00:00:00.000Z"],
  ["2020-02-29T12:00:00Z", "2020-02-29T12:00:00.000Z"],
  ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"],
  ["1969-12-31T23:59:59Z", "1969-12-31T23:59:59.000Z"],
  ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"],
];

function expectDateTimeRefusal(res: { status: number; body: any; text: string }, field: string, spelling: string) {
  expect(res.status, `${spelling}: ${res.text}`).to.equal(400);
  expect(res.body.error, spelling).to.equal("INVALID_REQUEST");
  expect(res.body.message, spelling).to.match(new RegExp(`^${field}: must be an RFC 3339 date-time .*leap second`));
  expect(res.body.details?.[0], spelling).to.include({ field });
}

describe("date-time input: one reading for every query and body field", () => {
  describe("query fields over the real stack", () => {
    let api: ApiClient;

    const sys = useTestSystem({ workerGroups: [] });
    before(async () => {
      api = (await sys.createMerchant()).api;
    });

    for (const path of ["/api/v1/balance-transactions", "/api/v1/events"]) {
      it(`${path}?createdAfter=…: what cannot be represented is a 400 naming createdAfter and the rule`, async () => {
        for (const spelling of UNREPRESENTABLE) {
          expectDateTimeRefusal(await api.get(`${path}?createdAfter=${encodeURIComponent(spelling)}`), "createdAfter", spelling);
        }
        for (const [spelling] of ACCEPTED) {
          const res = await api.get(`${path}?createdAfter=${encodeURIComponent(spelling)}`);
          expect(res.status, `${spelling}: ${res.text}`).to.equal(200);
        }
      });
    }

    it("over RPC, a Timestamp outside 0001–9999 or with bad nanos is INVALID_ARGUMENT naming the field, not INTERNAL", async () => {
      const rpc = new RpcClients(sys.config.internalApiToken);
      try {
        const base = `http://127.0.0.1:${sys.system.servicesPort}`;
        const merchantId = (await sys.createMerchant()).id;
        const wallet = rpc.client(WalletService, base);
        const events = rpc.client(EventsService, base);
        for (const createdAfter of [
          { seconds: -62_135_596_801n, nanos: 0 }, // 0000-12-31T23:59:59Z
          { seconds: 253_402_300_800n, nanos: 0 }, // 10000-01-01T00:00:00Z
          { seconds: 9_223_372_036_854_775_807n, nanos: 0 },
          { seconds: 0n, nanos: -1 },
        ]) {
          for (const call of [() => wallet.listBalanceTransactions({ merchantId, createdAfter }), () => events.listEvents({ merchantId, createdAfter })]) {
            const err = await call().then(
              () => undefined,
              (e: unknown) => ConnectError.from(e),
            );
            expect(err?.code, String(createdAfter.seconds)).to.equal(Code.InvalidArgument);
            expect(err?.rawMessage).to.match(/^createdAfter: /);
          }
        }
        expect((await wallet.listBalanceTransactions({ merchantId, createdAfter: { seconds: -62_135_596_800n, nanos: 0 } })).transactions).to.deep.equal([]);
      } finally {
        rpc.close();
      }
    });
  });

  describe("body fields (the same schema format, through the gateway's validation)", () => {
    // No operation takes a date-time in its body today; this one shows a body field gets the same rule as a query.
    const routes = defineRoutes([
      {
        method: "post",
        path: "/test/appointments",
        operationId: "testAppointment",
        summary: "echoes the instant it read",
        tag: "Test",
        auth: "none",
        body: { type: "object", additionalProperties: false, required: ["startsAt"], properties: { startsAt: dateTimeSchema } },
        responses: { 200: { description: "the instant" } },
        async handler({ body }) {
          return { status: 200, body: { startsAt: parseDateTime("startsAt", body.startsAt).toISOString() } };
        },
      },
    ]);
    let server: Server;
    let http: ApiClient;

    before(async () => {
      const deps: GatewayDeps = {
        config: loadConfig({ LOG_LEVEL: "silent" }),
        logger: createLogger("silent"),
        clients: {} as GatewayDeps["clients"],
        readiness: async () => ({}),
      };
      const app = createGatewayApp(deps, { idempotencyStore: undefined as never, routes });
      server = await new Promise((resolve) => {
        const s = app.listen(0, "127.0.0.1", () => resolve(s));
      });
      http = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
    after(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    it("refuses each unrepresentable spelling with a 400 naming startsAt, reads the others exactly", async () => {
      for (const spelling of UNREPRESENTABLE) {
        expectDateTimeRefusal(await http.post("/test/appointments", { startsAt: spelling }), "startsAt", spelling);
      }
      for (const [spelling, instant] of ACCEPTED) {
        const res = await http.post("/test/appointments", { startsAt: spelling });
        expect(res.status, `${spelling}: ${res.text}`).to.equal(200);
        expect(res.body.startsAt, spelling).to.equal(instant);
      }
    });
  });
});
