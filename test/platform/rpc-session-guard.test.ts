import { expect } from "chai";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SandboxService } from "../../proto/gen/billing/sandbox/v1/sandbox_pb.ts";
import { createServicesServer } from "../../services/platform/rpc/server.ts";
import { RpcClients } from "../../services/platform/rpc/clients.ts";

/**
 * Regression: a services process shutting down sends GOAWAY to its clients'
 * idle sessions; connect-node's session manager left that session's error
 * without a listener, which killed the calling process (1 in 6 concurrent
 * shutdowns). A crash here surfaces as an uncaught exception that fails the test
 * (or, if it comes later, the run); each round's reconnect shows the manager
 * let go of the old session.
 */
describe("RPC clients survive a services process going away", () => {
  it("a client whose server shuts down (GOAWAY on an idle session) keeps its process and reconnects to the next server", async () => {
    const routes = (router: Parameters<Parameters<typeof createServicesServer>[0]>[0]) =>
      router.service(SandboxService, {
        getClock: () => ({ now: timestampFromDate(new Date(0)), offsetSeconds: 0n }),
        advanceClock: () => ({ now: timestampFromDate(new Date(0)), offsetSeconds: 0n }),
      });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    const rpc = new RpcClients("token");
    try {
      let port = 0;
      for (let round = 0; round < 6; round++) {
        const server = createServicesServer(routes, []);
        port = await server.listen(port, "127.0.0.1");
        const client = rpc.client(SandboxService, `http://127.0.0.1:${port}`);
        const res = await client.getClock({});
        expect(res.offsetSeconds).to.equal(0n);
        // Shut the server down while the client asks again: the manager leaves the old
        // session (its error listener removed) for a new connection that is refused.
        const closing = server.close();
        await client.getClock({}).catch(() => undefined);
        await closing;
      }
    } finally {
      rpc.close();
      process.off("uncaughtException", onUncaught);
    }
    expect(uncaught).to.deep.equal([]);
  });
});
