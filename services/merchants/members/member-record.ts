import { toTimestamp, iso } from "../../platform/timestamps.ts";
import { withRecordJson } from "../../platform/rpc/record-json.ts";
import type { MemberRow } from "./entities.ts";

/** A member as the API shows it (REST body, object "member"). */
const memberRecord = (m: MemberRow) => ({
  id: m.id,
  object: "member",
  email: m.email,
  role: m.role,
  status: m.status,
  totpEnabled: m.totpEnabledAt != null,
  createdAt: iso(m.createdAt),
});

export const memberMessage = (m: MemberRow, merchantName = "") =>
  withRecordJson(
    {
      id: m.id,
      merchantId: m.merchantId,
      email: m.email,
      role: m.role,
      status: m.status,
      totpEnabled: m.totpEnabledAt != null,
      createdAt: toTimestamp(m.createdAt),
      merchantName,
    },
    memberRecord(m),
  );
