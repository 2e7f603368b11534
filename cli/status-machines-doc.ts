import { markdownTable, type StatusMachine } from "../services/platform/status-machine.ts";
import { planMachine } from "../services/catalog/plan-status.ts";
import { subscriptionMachine } from "../services/subscriptions/status-machine.ts";
import { authorizationMachine } from "../services/subscriptions/authorization-status.ts";
import { chargeMachine } from "../services/subscriptions/charges/charge-status.ts";
import { changeSessionMachine } from "../services/subscriptions/change-sessions/change-session-status-machine.ts";
import { refundMachine } from "../services/subscriptions/refunds/refund-status.ts";
import { orderMachine } from "../services/orders/order-status.ts";
import { payoutMachine } from "../services/payouts/payout-status.ts";
import { orderRefundMachine } from "../services/payouts/order-refunds/order-refund-status.ts";
import { endpointMachine } from "../services/events/endpoint-status.ts";
import { deliveryMachine } from "../services/events/delivery-status.ts";
import { walletUserMachine } from "../services/wallet/wallet-user-status.ts";

/**
 * Every status machine of the service, with the file that holds it and the
 * statuses the API shows (the others are internal and never answered).
 * docs/status-machines.md is generated from this list and a test keeps it,
 * and the OpenAPI enums, equal to it.
 */
export const STATUS_MACHINES: readonly { machine: StatusMachine<string, string, string>; file: string; hidden?: readonly string[]; note?: string }[] = [
  { machine: planMachine, file: "services/catalog/plan-status.ts", note: "Repeating a move changes nothing (200, no second event)." },
  {
    machine: subscriptionMachine,
    file: "services/subscriptions/status-machine.ts",
    note: "`PAUSED_FROM`: resume returns to the status the subscription was paused from (ACTIVE or TRIALING).",
  },
  { machine: authorizationMachine, file: "services/subscriptions/authorization-status.ts" },
  { machine: chargeMachine, file: "services/subscriptions/charges/charge-status.ts" },
  { machine: changeSessionMachine, file: "services/subscriptions/change-sessions/change-session-status-machine.ts" },
  { machine: refundMachine, file: "services/subscriptions/refunds/refund-status.ts", hidden: ["FAILED"] },
  { machine: orderMachine, file: "services/orders/order-status.ts" },
  {
    machine: payoutMachine,
    file: "services/payouts/payout-status.ts",
    hidden: ["OPENING", "REFUSED", "AWAITING_ADDRESS", "EXPIRED"],
    note: "AWAITING_ADDRESS and EXPIRED belong to order refunds' payouts; they are shown on the order refund.",
  },
  { machine: orderRefundMachine, file: "services/payouts/order-refunds/order-refund-status.ts", hidden: ["OPENING", "REFUSED"] },
  { machine: endpointMachine, file: "services/events/endpoint-status.ts", hidden: ["DELETED"], note: "A deleted endpoint answers 404." },
  { machine: deliveryMachine, file: "services/events/delivery-status.ts" },
  { machine: walletUserMachine, file: "services/wallet/wallet-user-status.ts" },
];

/** docs/status-machines.md, as the code has it. */
export function statusMachinesDoc(): string {
  const sections = STATUS_MACHINES.map(({ machine, file, hidden = [], note }) => {
    const shown = machine.statuses.filter((s) => !hidden.includes(s));
    return [
      `## ${machine.name[0]!.toUpperCase()}${machine.name.slice(1)}`,
      "",
      `\`${file}\`. Statuses the API shows: ${shown.map((s) => `\`${s}\``).join(", ")}.` +
        (hidden.length ? ` Internal, never answered: ${hidden.map((s) => `\`${s}\``).join(", ")}.` : "") +
        (machine.terminal.length ? ` Final: ${machine.terminal.map((s) => `\`${s}\``).join(", ")}.` : ""),
      ...(note ? ["", note] : []),
      "",
      markdownTable(machine),
    ].join("\n");
  });
  return [
    "# Status machines",
    "",
    "Generated from the code (`cli/status-machines-doc.ts`; regenerate with `npm run docs:machines`, a test keeps",
    "this page and the OpenAPI enums equal to it). Every machine is one table of `from → event → to`; any move the",
    "table does not list is refused with 409 `INVALID_STATUS_TRANSITION`, whose message names the machine.",
    "",
    "## Contents",
    "",
    ...STATUS_MACHINES.map(({ machine }) => `- [${machine.name[0]!.toUpperCase()}${machine.name.slice(1)}](#${machine.name.replace(/ /g, "-")})`),
    "",
    sections.join("\n\n"),
    "",
  ].join("\n");
}
