import { defineStatusMachine } from "../../platform/status-machine.ts";
import { CHARGE_STATUSES, type ChargeStatus } from "../contract.ts";

/**
 * The charge status machine: a charge is born PENDING (its wallet call in
 * flight, platform/wallet-calls) and settled once by the wallet's answer.
 * SUCCEEDED and FAILED are final: a failed renewal is retried as a new charge.
 */
type ChargeEvent =
  | "wallet_paid" //    the wallet moved the money (or replayed that it had)
  | "wallet_refused"; // insufficient funds or a frozen account: nothing moved

export const chargeMachine = defineStatusMachine<ChargeStatus, ChargeEvent>("charge", CHARGE_STATUSES, [
  { from: "PENDING", event: "wallet_paid", to: "SUCCEEDED" },
  { from: "PENDING", event: "wallet_refused", to: "FAILED" },
]);
