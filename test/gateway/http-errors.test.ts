import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromConnectError } from "../../gateway/http-errors.ts";
import { ERROR_CODE_HEADER } from "../../services/platform/rpc/error-code.ts";

/** The gateway's one table from Connect errors to HTTP: only a service's verdict (a domain code) may be a 4xx. */
describe("Connect errors → HTTP (gateway/http-errors.ts)", () => {
  const codes = Object.values(Code).filter((c): c is Code => typeof c === "number");

  it("without a domain code no Connect code becomes a 4xx, and the raw text is never shown", () => {
    for (const code of codes) {
      const err = new ConnectError("read ECONNRESET 10.0.0.7:7001", code);
      const http = fromConnectError(err);
      expect(http.status, Code[code]).to.be.at.least(500);
      expect(http.message, Code[code]).not.to.contain("ECONNRESET");
    }
  });

  it("transport failures as connect-node reports them are a retryable 503", () => {
    const node = (code: string, message: string) => Object.assign(new Error(message), { code });
    const failures = [
      new ConnectError("read ECONNRESET", Code.Aborted, undefined, undefined, node("ECONNRESET", "read ECONNRESET")),
      new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled),
      new ConnectError("http/2 stream closed with error code ENHANCE_YOUR_CALM (0xb)", Code.ResourceExhausted),
      new ConnectError("Stream closed with error code NGHTTP2_INTERNAL_ERROR", Code.Internal, undefined, undefined, node("ERR_HTTP2_STREAM_ERROR", "x")),
      new ConnectError("Session closed with error code 2", Code.Internal, undefined, undefined, node("ERR_HTTP2_SESSION_ERROR", "x")),
      new ConnectError("write EPIPE", Code.Internal, undefined, undefined, node("EPIPE", "write EPIPE")),
      new ConnectError("connect ECONNREFUSED 127.0.0.1:7001", Code.Unavailable),
    ];
    for (const err of failures) {
      expect(fromConnectError(err), err.rawMessage).to.include({ status: 503, code: "SERVICE_UNAVAILABLE" });
    }
    expect(fromConnectError(new ConnectError("the operation timed out", Code.DeadlineExceeded))).to.include({ status: 504, code: "TIMEOUT" });
    // Not a transport failure: our own bug stays a 500.
    expect(fromConnectError(new ConnectError("cannot decode message", Code.Internal))).to.include({ status: 500, code: "INTERNAL_ERROR" });
  });

  it("a domain code keeps the table: a service's conflict is a 409 with its code and words", () => {
    const verdict = (code: Code, domain: string) => new ConnectError("this refund is being processed", code, { [ERROR_CODE_HEADER]: domain });
    expect(fromConnectError(verdict(Code.FailedPrecondition, "REFUND_IN_PROGRESS"))).to.include({
      status: 409,
      code: "REFUND_IN_PROGRESS",
      message: "this refund is being processed",
    });
    expect(fromConnectError(verdict(Code.AlreadyExists, "SUBSCRIPTION_ALREADY_EXISTS"))).to.include({ status: 409 });
    expect(fromConnectError(verdict(Code.NotFound, "PLAN_NOT_FOUND"))).to.include({ status: 404 });
    expect(fromConnectError(verdict(Code.Unavailable, "WALLET_UNAVAILABLE"))).to.include({ status: 503, code: "WALLET_UNAVAILABLE" });
    expect(fromConnectError(verdict(Code.Internal, "INTERNAL_ERROR"))).to.include({ status: 500, message: "internal error" });
  });
});
