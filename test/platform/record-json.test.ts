import { expect } from "chai";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Interval, IntervalSchema, PlanSchema } from "../../proto/gen/billing/catalog/v1/catalog_pb.ts";
import { DepositOutcome, DepositOutcomeSchema } from "../../proto/gen/billing/orders/v1/orders_pb.ts";
import { planMessage } from "../../services/catalog/rpc.ts";
import { planRecord } from "../../services/catalog/plan-record.ts";
import type { PlanRow } from "../../services/catalog/entities.ts";
import { recordOf, withRecordJson } from "../../services/platform/rpc/record-json.ts";
import { enumName, enumValue } from "../../services/platform/rpc/proto-enums.ts";
import { isoFromTimestamp, toOptionalTimestamp, toTimestamp } from "../../services/platform/timestamps.ts";

describe("records carried to the gateway (record_json)", () => {
  const row = {
    id: "5f0c2a56-8d7a-4b57-9f36-3b1c1c2f0d11",
    merchantId: "0b6f5d8e-1b7e-4a39-8f0e-8a9f5e4c2d10",
    externalReference: null,
    name: "Pro",
    description: "Everything",
    amount: "10.500000000000000000",
    currency: "USD",
    interval: "MONTH",
    intervalCount: 1,
    trialDays: 0,
    maximumChargeAmount: null,
    metadata: { tier: 3, big: 12345678901234567890, nested: { a: [1, "x"] } },
    status: "ACTIVE",
    createdAt: new Date("2026-01-02T03:04:05.678Z"),
    updatedAt: new Date("2026-01-02T03:04:05.679Z"),
  } as unknown as PlanRow;

  it("the REST body is the service record, byte for byte, after the wire (key order, nulls, milliseconds)", () => {
    const onWire = fromBinary(PlanSchema, toBinary(PlanSchema, create(PlanSchema, planMessage(row))));
    expect(JSON.stringify(recordOf(onWire))).to.equal(JSON.stringify(planRecord(row)));
    expect(recordOf(onWire)).to.include({ amount: "10.5", externalReference: null, createdAt: "2026-01-02T03:04:05.678Z" });
  });

  it("the typed fields are derived from the same record", () => {
    const m = planMessage(row);
    expect(m).to.include({ amount: "10.5", interval: Interval.MONTH, name: "Pro" });
    expect(m.externalReference).to.equal(undefined);
    expect(isoFromTimestamp(m.createdAt)).to.equal("2026-01-02T03:04:05.678Z");
    expect(JSON.parse(m.metadataJson)).to.deep.equal(row.metadata);
  });

  it("a message without its record is a service bug, never an empty body", () => {
    expect(() => recordOf(create(PlanSchema, {}))).to.throw(/record_json is empty/);
    expect(() => recordOf(undefined)).to.throw(/record_json is empty/);
    expect(recordOf(withRecordJson({}, { a: null }))).to.deep.equal({ a: null });
  });

  it("times: one formatter, exact to the millisecond both ways; a missing time is absent on the wire", () => {
    const at = "2026-03-04T05:06:07.089Z";
    expect(isoFromTimestamp(toTimestamp(at))).to.equal(at);
    expect(isoFromTimestamp(toTimestamp(new Date(at)))).to.equal(at);
    expect(toOptionalTimestamp(null)).to.equal(undefined);
  });

  it("proto enums by their REST names, from the generated descriptor", () => {
    expect(enumName(IntervalSchema, Interval.YEAR)).to.equal("YEAR");
    expect(enumValue(IntervalSchema, "WEEK")).to.equal(Interval.WEEK);
    expect(enumValue(IntervalSchema, "FORTNIGHT")).to.equal(Interval.UNSPECIFIED);
    expect(enumName(DepositOutcomeSchema, DepositOutcome.DUPLICATE)).to.equal("DUPLICATE");
    expect(enumName(DepositOutcomeSchema, 99)).to.equal("UNSPECIFIED");
  });
});
