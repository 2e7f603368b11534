import type { DueWorkProbe } from "../platform/observability/due-work.ts";
import { oldestDueEmailWorkAt } from "./email-store.ts";

/** Lag probe of the emails group: the oldest email due and not sent, or the oldest email-worthy event not yet collected. */
export const emailDueWork: DueWorkProbe[] = [{ kind: "customer_email", group: "emails", oldestDue: oldestDueEmailWorkAt }];
