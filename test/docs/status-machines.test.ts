import { expect } from "chai";
import { readFileSync } from "node:fs";
import { STATUS_MACHINES, statusMachinesDoc } from "../../cli/status-machines-doc.ts";
import { planSchema } from "../../gateway/schemas/plans.ts";
import { subscriptionSchema } from "../../gateway/schemas/subscriptions.ts";
import { chargeSchema } from "../../gateway/schemas/subscription-charges.ts";
import { changeSessionSchema } from "../../gateway/schemas/change-sessions.ts";
import { refundSchema } from "../../gateway/schemas/refunds.ts";
import { paymentOrderSchema } from "../../gateway/schemas/payment-orders.ts";
import { payoutSchema } from "../../gateway/schemas/payouts.ts";
import { orderRefundSchema } from "../../gateway/schemas/order-refunds.ts";
import { deliverySchema, webhookEndpointSchema } from "../../gateway/schemas/events.ts";
import { walletUserSchema } from "../../gateway/schemas/wallet.ts";
import { CANCELLATION_REASONS } from "../../services/subscriptions/contract.ts";

/** The `status` enum of each machine's record in the OpenAPI document (the schemas it is built from). */
const RECORD_STATUS: Record<string, any> = {
  plan: planSchema.properties.status,
  subscription: subscriptionSchema.properties.status,
  authorization:
    (subscriptionSchema.properties.authorization as any).properties?.status ??
    (subscriptionSchema.properties.authorization as any).anyOf?.[0]?.properties.status,
  charge: chargeSchema.properties.status,
  "change session": changeSessionSchema.properties.status,
  refund: refundSchema.properties.status,
  "payment order": paymentOrderSchema.properties.status,
  payout: (payoutSchema.properties as any).status,
  "order refund": orderRefundSchema.properties.status,
  "webhook endpoint": webhookEndpointSchema.properties.status,
  "webhook delivery": deliverySchema.properties.status,
  "wallet user": walletUserSchema.properties.status,
};

describe("status machines in the docs and the OpenAPI document", () => {
  it("docs/status-machines.md is the code's tables (npm run docs:machines regenerates it)", () => {
    const onDisk = readFileSync(new URL("../../docs/status-machines.md", import.meta.url), "utf8");
    expect(onDisk).to.equal(statusMachinesDoc());
  });

  for (const { machine, hidden = [] } of STATUS_MACHINES) {
    it(`the ${machine.name} record's status enum is the machine's shown statuses`, () => {
      const schema = RECORD_STATUS[machine.name];
      expect(schema, `no record schema mapped for ${machine.name}`).to.be.an("object");
      expect([...schema.enum].sort()).to.deep.equal(machine.statuses.filter((s) => !hidden.includes(s)).sort());
    });
  }

  it("every machine has its record schema checked here", () => {
    expect(Object.keys(RECORD_STATUS).sort()).to.deep.equal(STATUS_MACHINES.map((m) => m.machine.name).sort());
  });

  it("the subscription's cancellationReason enum lists every reason the service records (CUSTOMER_CANCELLED included)", () => {
    const reason = subscriptionSchema.properties.cancellationReason as any;
    const values = reason.enum ?? reason.anyOf?.find((s: any) => s.enum)?.enum ?? reason.oneOf?.find((s: any) => s.enum)?.enum;
    expect(values.filter((v: unknown) => v !== null).sort()).to.deep.equal([...CANCELLATION_REASONS].sort());
  });
});
