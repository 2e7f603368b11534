import { randomUUID } from "node:crypto";
import { LockMode, UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, invalid, notFound } from "../platform/errors.ts";
import { isUuid } from "../platform/ids.ts";
import { characterCount } from "../platform/text.ts";
import { afterCursor, clampLimit, KEYSET_ORDER, toPage, type Page } from "../platform/pagination.ts";
import { recordEvent } from "../events/record-event.ts";
import { DESTINATION_LABEL_MAX_LENGTH, DESTINATION_STATUSES, PAYOUT_ERRORS } from "./contract.ts";
import { PayoutDestination, type PayoutDestinationRow } from "./entities.ts";
import { canonicalPayoutAddress } from "./addresses/payout-address.ts";
import type { PayoutPorts } from "./payout-ports.ts";
import { destinationRecord } from "./payout-records.ts";

export const destinationNotFound = (id: string) => notFound(PAYOUT_ERRORS.destinationNotFound, `payout destination ${id} not found`);

interface CreateDestinationInput {
  merchantId: string;
  asset: string;
  address: string;
  label?: string | undefined;
}

/**
 * Registers an address the merchant may pay out to, in one asset. It can be
 * used only after the cooling period (PAYOUT_DESTINATION_COOLDOWN_MINUTES on
 * the service clock), and payout_destination.created is recorded at once:
 * a leaked API key cannot drain the balance to a fresh address before the
 * merchant hears of it.
 */
export async function createDestination(
  ctx: UseCaseContext,
  ports: Pick<PayoutPorts, "wallet" | "addressChain" | "cooldownMinutes">,
  input: CreateDestinationInput,
): Promise<PayoutDestinationRow> {
  const asset = (await ports.wallet.listAssets()).find((a) => a.code === input.asset);
  if (!asset) throw invalid("INVALID_REQUEST", `asset: must be one of ${(await ports.wallet.listAssets()).map((a) => a.code).join(", ")}`);
  if (input.label !== undefined && characterCount(input.label) > DESTINATION_LABEL_MAX_LENGTH) {
    throw invalid("INVALID_REQUEST", `label: must be at most ${DESTINATION_LABEL_MAX_LENGTH} characters`);
  }
  const address = canonicalPayoutAddress(asset.network, input.address, ports.addressChain);
  const now = ctx.clock.now();
  try {
    return await ctx.em.transactional(async (em) => {
      const row = em.create(PayoutDestination, {
        id: randomUUID(),
        merchantId: input.merchantId,
        asset: asset.code,
        network: asset.network,
        address,
        label: input.label ?? null,
        activatesAt: new Date(now.getTime() + ports.cooldownMinutes * 60_000),
        removedAt: null,
        createdAt: now,
      });
      recordEvent(em, ctx.clock, { merchantId: input.merchantId, type: "payout_destination.created", data: destinationRecord(row, now) });
      return row;
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw conflict(
        PAYOUT_ERRORS.destinationExists,
        `a ${asset.code} payout destination with this address already exists (remove it first to register it again)`,
      );
    }
    throw err;
  }
}

export async function getDestination(ctx: UseCaseContext, merchantId: string, id: string): Promise<PayoutDestinationRow> {
  if (!isUuid(id)) throw destinationNotFound(id);
  const row = await ctx.em.findOne(PayoutDestination, { id: id.toLowerCase(), merchantId });
  if (!row) throw destinationNotFound(id);
  return row;
}

/**
 * DELETE: the destination is kept for history as REMOVED; payouts in flight
 * to it continue. Removing a removed one answers it as it is.
 */
export async function removeDestination(ctx: UseCaseContext, merchantId: string, id: string): Promise<PayoutDestinationRow> {
  if (!isUuid(id)) throw destinationNotFound(id);
  return ctx.em.transactional(async (em) => {
    const row = await em.findOne(PayoutDestination, { id: id.toLowerCase(), merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!row) throw destinationNotFound(id);
    if (!row.removedAt) {
      row.removedAt = ctx.clock.now();
      recordEvent(em, ctx.clock, { merchantId, type: "payout_destination.removed", data: destinationRecord(row, ctx.clock.now()) });
    }
    return row;
  });
}

/**
 * The dashboard's early activation: an OWNER/ADMIN who confirmed with a fresh
 * TOTP code ends the cooling period now (the gateway checks role and code; the
 * REST API has no such call, so a leaked key still waits). Recorded as
 * payout_destination.activated so every webhook hears of it; an ACTIVE one
 * answers as it is; a REMOVED one is refused.
 */
export async function activateDestination(ctx: UseCaseContext, merchantId: string, id: string): Promise<PayoutDestinationRow> {
  if (!isUuid(id)) throw destinationNotFound(id);
  return ctx.em.transactional(async (em) => {
    const row = await em.findOne(PayoutDestination, { id: id.toLowerCase(), merchantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!row) throw destinationNotFound(id);
    if (row.removedAt) throw conflict(PAYOUT_ERRORS.destinationNotActive, `payout destination ${row.id} is removed`);
    const now = ctx.clock.now();
    if (row.activatesAt.getTime() > now.getTime()) {
      row.activatesAt = now;
      recordEvent(em, ctx.clock, { merchantId, type: "payout_destination.activated", data: destinationRecord(row, now) });
    }
    return row;
  });
}

interface ListDestinationsInput {
  merchantId: string;
  status?: string | undefined;
  asset?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/** Newest first (keyset). `status` is computed from the service clock, as in each record. */
export async function listDestinations(ctx: UseCaseContext, input: ListDestinationsInput): Promise<Page<PayoutDestinationRow>> {
  const where: Record<string, unknown> = { merchantId: input.merchantId, ...afterCursor(input.cursor) };
  if (input.asset !== undefined) where.asset = input.asset;
  if (input.status !== undefined) {
    if (!(DESTINATION_STATUSES as readonly string[]).includes(input.status))
      throw invalid("INVALID_REQUEST", `status: must be one of ${DESTINATION_STATUSES.join(", ")}`);
    const now = ctx.clock.now();
    if (input.status === "REMOVED") where.removedAt = { $ne: null };
    else if (input.status === "ACTIVE") Object.assign(where, { removedAt: null, activatesAt: { $lte: now } });
    else Object.assign(where, { removedAt: null, activatesAt: { $gt: now } });
  }
  const limit = clampLimit(input.limit);
  const rows = await ctx.em.find(PayoutDestination, where, { orderBy: KEYSET_ORDER, limit: limit + 1 });
  return toPage(rows, limit);
}
