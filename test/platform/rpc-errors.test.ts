import { expect } from "chai";
import { Code } from "@connectrpc/connect";
import { ConnectionException } from "@mikro-orm/core";
import { toConnectError } from "../../services/platform/rpc/errors.ts";
import { errorCodeOf } from "../../services/platform/rpc/error-code.ts";
import { DomainError } from "../../services/platform/errors.ts";
import { createLogger } from "../../services/platform/logger.ts";

describe("domain errors → Connect errors (the one translator)", () => {
  const logger = createLogger("silent");

  it("keeps the domain code and maps the kind", () => {
    const err = toConnectError(new DomainError("not_found", "PLAN_NOT_FOUND", "plan x not found"), logger, "GetPlan");
    expect(err.code).to.equal(Code.NotFound);
    expect(errorCodeOf(err)).to.equal("PLAN_NOT_FOUND");
    expect(err.rawMessage).to.equal("plan x not found");
  });

  it("turns an unreachable or restarting database into a retryable UNAVAILABLE without details", () => {
    for (const cause of [
      Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:5432"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      new ConnectionException(new Error("pool closed")),
    ]) {
      const err = toConnectError(cause, logger, "CreatePlan");
      expect(err.code).to.equal(Code.Unavailable);
      expect(errorCodeOf(err)).to.equal("SERVICE_UNAVAILABLE");
      expect(err.rawMessage).not.to.contain("10.0.0.5");
    }
  });

  it("a connection cut mid-statement, a dead client or no free slot (wrapped or not) is UNAVAILABLE; a statement timeout is DEADLINE_EXCEEDED", () => {
    for (const cause of [
      new Error("Connection terminated unexpectedly"),
      new Error("Client was closed and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
      new Error("wrapped", { cause: Object.assign(new Error("the database system is starting up"), { code: "57P03" }) }),
    ]) {
      const err = toConnectError(cause, logger, "CreatePlan");
      expect(err.code, cause.message).to.equal(Code.Unavailable);
      expect(errorCodeOf(err)).to.equal("SERVICE_UNAVAILABLE");
    }
    const timeout = toConnectError(Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" }), logger, "CreatePlan");
    expect(timeout.code).to.equal(Code.DeadlineExceeded);
    expect(errorCodeOf(timeout)).to.equal("TIMEOUT");
  });

  it("a write that reached a demoted (read-only) node and a pooler's own connection failure are UNAVAILABLE, never INTERNAL", () => {
    for (const cause of [
      new Error("wrapped", { cause: Object.assign(new Error("cannot execute INSERT in a read-only transaction"), { code: "25006" }) }),
      Object.assign(new Error("pgbouncer cannot connect to server"), { code: "08P01" }),
      Object.assign(new Error("query_wait_timeout"), { code: "08P01" }),
      Object.assign(new Error("server closed the connection unexpectedly"), { code: "08006" }),
    ]) {
      const err = toConnectError(cause, logger, "CreatePlan");
      expect(err.code, cause.message).to.equal(Code.Unavailable);
      expect(errorCodeOf(err)).to.equal("SERVICE_UNAVAILABLE");
      expect(err.rawMessage).not.to.match(/read-only|pgbouncer/);
    }
  });

  it("hides anything else behind INTERNAL", () => {
    const err = toConnectError(Object.assign(new Error('relation "plans" does not exist'), { code: "42P01" }), logger, "CreatePlan");
    expect(err.code).to.equal(Code.Internal);
    expect(err.rawMessage).to.equal("internal error");
  });
});
