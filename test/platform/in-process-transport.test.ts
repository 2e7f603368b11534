import { expect } from "chai";
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { clone, create, equals } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MerchantService, type GetMerchantRequest } from "../../proto/gen/billing/merchants/v1/merchants_pb.ts";
import { EventsService, ListEventsResponseSchema, type ListEventsRequest } from "../../proto/gen/billing/events/v1/events_pb.ts";
import { createInProcessTransport } from "../../services/platform/rpc/in-process.ts";
import { requireServiceToken } from "../../services/platform/rpc/auth.ts";
import { errorInterceptor } from "../../services/platform/rpc/errors.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import { DomainError } from "../../services/platform/errors.ts";
import { createLogger } from "../../services/platform/logger.ts";

const TOKEN = "in-process-test-token-0123456789";
const logger = createLogger("silent");

/** A merchants service whose GetMerchant does what each test asks (the transport is the subject). */
function serviceWith(getMerchant: (req: GetMerchantRequest, ctx: HandlerContext) => Promise<object>) {
  return (router: ConnectRouter) => router.service(MerchantService, { getMerchant: getMerchant as never });
}

const serverInterceptors = [requireServiceToken(TOKEN), errorInterceptor(logger)];

describe("in-process RPC transport", () => {
  it("runs the caller's interceptors, then the server's (service token checked), then the method", async () => {
    const seen: string[] = [];
    const routes = serviceWith(async (req) => {
      seen.push(`method ${req.id}`);
      return { merchant: { id: req.id, name: "Acme" } };
    });
    const tracer = (next: any) => async (req: any) => {
      seen.push(`client ${req.method.name}`);
      return next(req);
    };
    const client = createClient(MerchantService, createInProcessTransport(routes, serverInterceptors, { token: TOKEN, clientInterceptors: [tracer] }));
    const res = await client.getMerchant({ id: "m1" });
    expect(res.merchant?.name).to.equal("Acme");
    expect(seen).to.deep.equal(["client GetMerchant", "method m1"]);

    const intruder = createClient(MerchantService, createInProcessTransport(routes, serverInterceptors, { token: "another-token-0123456789" }));
    const refused = await intruder.getMerchant({ id: "m1" }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(ConnectError);
    expect((refused as ConnectError).code).to.equal(Code.Unauthenticated);
  });

  it("answers errors as the wire carries them: code, message and the domain code, never the cause", async () => {
    const routes = serviceWith(async () => {
      throw new DomainError("not_found", "MERCHANT_NOT_FOUND", "merchant m2 not found");
    });
    const client = createClient(MerchantService, createInProcessTransport(routes, serverInterceptors, { token: TOKEN }));
    const err = (await client.getMerchant({ id: "m2" }).catch((e: unknown) => e)) as ConnectError;
    expect(err).to.be.instanceOf(ConnectError);
    expect(err.code).to.equal(Code.NotFound);
    expect(err.rawMessage).to.equal("merchant m2 not found");
    expect(errorCodeOf(err)).to.equal("MERCHANT_NOT_FOUND");
    expect(err.cause).to.equal(undefined);
  });

  it("hides an unexpected failure behind INTERNAL without its text", async () => {
    const routes = serviceWith(async () => {
      throw new Error('relation "merchants" does not exist');
    });
    const client = createClient(MerchantService, createInProcessTransport(routes, serverInterceptors, { token: TOKEN }));
    const err = (await client.getMerchant({ id: "m3" }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).to.equal(Code.Internal);
    expect(err.rawMessage).to.equal("internal error");
    expect(err.cause).to.equal(undefined);
  });

  it("never shares objects between caller and service (messages are copied both ways)", async () => {
    const kept = { merchant: { id: "m4", name: "Kept" } };
    let received: GetMerchantRequest | undefined;
    const routes = serviceWith(async (req) => {
      received = req;
      return kept;
    });
    const client = createClient(MerchantService, createInProcessTransport(routes, serverInterceptors, { token: TOKEN }));
    const res = await client.getMerchant({ id: "m4" });
    res.merchant!.name = "changed by the caller";
    expect(kept.merchant.name).to.equal("Kept");
    received!.id = "changed by the service";
    const again = await client.getMerchant({ id: "m4" });
    expect(again.merchant?.name).to.equal("Kept");
  });

  it("copies every kind of field whole: repeated messages, int64, timestamps, optional fields left unset", async () => {
    const sent = create(ListEventsResponseSchema, {
      events: [
        { id: "e1", type: "plan.created", createdAt: timestampFromDate(new Date("2026-11-29T01:02:03.456Z")), sequence: 9007199254740993n, dataJson: "{}" },
        { id: "e2", type: "plan.updated", createdAt: timestampFromDate(new Date("2026-11-29T01:02:04Z")) },
      ],
      hasMore: true,
      nextCursor: "c2",
    });
    const kept = clone(ListEventsResponseSchema, sent);
    let received: ListEventsRequest | undefined;
    const routes = (router: ConnectRouter) =>
      router.service(EventsService, {
        listEvents: async (req: ListEventsRequest) => {
          received = req;
          return sent;
        },
      } as never);
    const client = createClient(EventsService, createInProcessTransport(routes, serverInterceptors, { token: TOKEN }));
    const createdAfter = timestampFromDate(new Date(0));
    const res = await client.listEvents({ merchantId: "m6", limit: 2, sequenceAfter: 5n, createdAfter });
    expect(equals(ListEventsResponseSchema, res, kept)).to.equal(true);
    expect(res.events).not.to.equal(sent.events);
    expect(res.events[0]!.createdAt).not.to.equal(sent.events[0]!.createdAt);
    expect(received!.createdAfter).not.to.equal(createdAfter);
    expect(received!.createdAfter!.seconds).to.equal(0n);
    expect(res.events[1]!.sequence).to.equal(undefined);
    expect(received!.sequenceAfter).to.equal(5n);
    expect(received!.cursor).to.equal(undefined);
    // Not one object shared, however deep.
    res.events[0]!.createdAt!.seconds = 0n;
    res.events.push(res.events[0]!);
    expect(equals(ListEventsResponseSchema, sent, kept)).to.equal(true);
  });

  it("enforces the deadline: DEADLINE_EXCEEDED for the caller, the handler's signal aborted", async () => {
    let handlerSignal: AbortSignal | undefined;
    let remaining: number | undefined;
    const routes = serviceWith(async (_req, ctx) => {
      handlerSignal = ctx.signal;
      remaining = ctx.timeoutMs();
      // Waits for nothing but its own cancellation.
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      return {};
    });
    const client = createClient(MerchantService, createInProcessTransport(routes, serverInterceptors, { token: TOKEN, defaultTimeoutMs: 50 }));
    const err = (await client.getMerchant({ id: "m5" }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).to.equal(Code.DeadlineExceeded);
    expect(handlerSignal?.aborted).to.equal(true);
    expect(remaining).to.be.a("number").and.to.be.at.most(50);
  });

  it("answers UNIMPLEMENTED for a method the process does not serve", async () => {
    const client = createClient(
      MerchantService,
      createInProcessTransport(
        serviceWith(async () => ({})),
        serverInterceptors,
        { token: TOKEN },
      ),
    );
    const err = (await client.createApiKey({ merchantId: "m6" }).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).to.equal(Code.Unimplemented);
  });
});
