/**
 * The statuses of a customer email (customer_emails; the table's check in
 * migration 0029 lists the same). No machine: the store's fenced marks are
 * its only moves (PENDING → SENDING when claimed; SENDING → SENT, PARKED, or
 * PENDING again for a retry).
 */
export const EMAIL_STATUSES = ["PENDING", "SENDING", "SENT", "PARKED"] as const;

/** Due when their time comes: waiting, or claimed by a sender whose lease may have run out (the due index's predicate). */
export const DUE_EMAIL_STATUSES: readonly (typeof EMAIL_STATUSES)[number][] = ["PENDING", "SENDING"];
