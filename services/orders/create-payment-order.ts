import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict, DomainError, invalid } from "../platform/errors.ts";
import { isCurrency, CURRENCIES } from "../platform/currencies.ts";
import {
  exceedsStorage,
  fitsStorage,
  formatAmount,
  formatAtScale,
  fractionDigits,
  isZero,
  MAX_INTEGER_DIGITS,
  parseAmount,
  type Amount,
} from "../platform/money.ts";
import { recordEvent } from "../events/record-event.ts";
import { PaymentOrder } from "./entities.ts";
import { orderRecord } from "./order-record.ts";
import { requestFingerprint } from "./request-fingerprint.ts";
import { allocateDerivationIndex } from "./derivation-index.ts";
import { checkExpiresInMinutes, checkReference, parsePositiveAmount, parseTolerancePercent } from "./order-input.ts";
import type { DepositAddresses } from "./addresses/deposit-addresses.ts";
import type { RegistryAsset, WalletPort } from "./wallet-port.ts";
import { findOrderWithPayments, type OrderWithPayments } from "./order-store.ts";

interface CreatePaymentOrderInput {
  merchantId: string;
  externalId: string;
  externalCustomerId: string;
  asset: string;
  amount: string;
  currency?: string | undefined;
  /** 0 means the default. */
  expiresInMinutes: number;
  metadata: Record<string, unknown>;
  underpaymentTolerancePercent?: string | undefined;
}

interface CreatePaymentOrderDeps {
  wallet: WalletPort;
  addresses: DepositAddresses;
}

interface CreatedOrder extends OrderWithPayments {
  /** False when a retry of the same externalId and request returned the existing order. */
  created: boolean;
}

/**
 * Creates an order with a fresh deposit address and the exact amount to pay.
 * The merchant's externalId makes retries safe: the same externalId with the
 * same request returns the existing order (whatever its status); with a
 * different request it is PAYMENT_ORDER_ALREADY_EXISTS. The quote (a network
 * call) happens before the transaction, which holds no lock of its own.
 */
export async function createPaymentOrder(ctx: UseCaseContext, deps: CreatePaymentOrderDeps, input: CreatePaymentOrderInput): Promise<CreatedOrder> {
  const externalId = checkReference("externalId", input.externalId);
  const externalCustomerId = checkReference("externalCustomerId", input.externalCustomerId);
  const amount = parsePositiveAmount("amount", input.amount);
  const currency = input.currency || undefined;
  if (currency !== undefined && !isCurrency(currency)) throw invalid("INVALID_REQUEST", `currency: must be one of ${CURRENCIES.join(", ")}`);
  const expiresInMinutes = checkExpiresInMinutes(input.expiresInMinutes);
  const tolerance = parseTolerancePercent(input.underpaymentTolerancePercent);

  const fingerprint = requestFingerprint({
    externalCustomerId,
    asset: input.asset,
    amount: formatAmount(amount),
    currency: currency ?? null,
    expiresInMinutes,
    underpaymentTolerancePercent: formatAmount(tolerance),
    metadata: input.metadata,
  });
  const existing = await findOrderWithPayments(ctx.em, { merchantId: input.merchantId, externalId });
  if (existing) return replay(existing, fingerprint);

  const asset = await resolveAsset(deps, input.asset);
  const source = deps.addresses.forNetwork(asset.network)!;
  const price = await priceInAsset(deps.wallet, asset, amount, currency);

  const index = await allocateDerivationIndex(ctx.em, source.keyId);
  const address = source.address(index);
  const now = ctx.clock.now();
  try {
    const order = await ctx.em.transactional(async (em) => {
      const order = em.create(PaymentOrder, {
        id: randomUUID(),
        merchantId: input.merchantId,
        externalId,
        externalCustomerId,
        asset: asset.code,
        network: asset.network,
        decimals: asset.decimals,
        requiredConfirmations: asset.requiredConfirmations,
        address,
        derivationKey: source.keyId,
        derivationIndex: index,
        amountToPay: formatAtScale(price.amountToPay, asset.decimals),
        requestedAmount: formatAmount(amount),
        requestedCurrency: currency ?? null,
        rate: price.rate,
        rateAt: price.rateAt,
        status: "PENDING",
        expiresAt: new Date(now.getTime() + expiresInMinutes * 60_000),
        amountPaid: "0",
        overpaidAmount: "0",
        amountPaidLate: "0",
        latePayment: false,
        underpaymentTolerancePercent: formatAmount(tolerance),
        requestFingerprint: fingerprint,
        metadata: input.metadata,
        paidAt: null,
        expiredAt: null,
        settledAt: null,
        createdAt: now,
        updatedAt: now,
      });
      recordEvent(em, ctx.clock, { merchantId: input.merchantId, type: "payment_order.created", data: orderRecord(order, []) });
      return order;
    });
    return { order, payments: [], created: true };
  } catch (err) {
    // A concurrent create with the same externalId won the race: answer as a retry would.
    if (err instanceof UniqueConstraintViolationException && /external_id/.test(err.message)) {
      const winner = await findOrderWithPayments(ctx.em.fork(), { merchantId: input.merchantId, externalId });
      if (winner) return replay(winner, fingerprint);
    }
    throw err;
  }
}

function replay(existing: OrderWithPayments, fingerprint: string): CreatedOrder {
  if (existing.order.requestFingerprint !== fingerprint) {
    throw conflict(
      "PAYMENT_ORDER_ALREADY_EXISTS",
      `externalId: an order with externalId ${existing.order.externalId} already exists with a different request; use a new externalId or repeat the original request`,
    );
  }
  return { ...existing, created: false };
}

async function resolveAsset(deps: CreatePaymentOrderDeps, code: string): Promise<RegistryAsset> {
  const assets = (await deps.wallet.listAssets()).filter((a) => deps.addresses.forNetwork(a.network));
  const asset = assets.find((a) => a.code === code);
  if (!asset) throw invalid("UNSUPPORTED_ASSET", `asset: must be one of ${assets.map((a) => a.code).join(", ")}`);
  return asset;
}

interface Price {
  amountToPay: Amount;
  rate: string | null;
  rateAt: Date | null;
}

/**
 * Without a currency the amount is already in the asset and must be exact at
 * its decimals (rounding it would change what the merchant asked for). With a
 * currency the wallet quotes it, rounding up so the merchant is never short.
 */
async function priceInAsset(wallet: WalletPort, asset: RegistryAsset, amount: Amount, currency: string | undefined): Promise<Price> {
  if (currency === undefined) {
    if (fractionDigits(amount) > asset.decimals) {
      throw invalid(
        "INVALID_REQUEST",
        `amount: ${asset.code} has ${asset.decimals} decimals; at most ${asset.decimals} fraction digits are allowed without a currency`,
      );
    }
    return { amountToPay: amount, rate: null, rateAt: null };
  }
  const quote = await wallet.quote({ amount: formatAmount(amount), currency, asset: asset.code });
  // A huge amount converted to a cheap asset can exceed what an amount may be: the merchant's input, a 400.
  if (/^\d+(\.\d+)?$/.test(quote.assetAmount) && exceedsStorage(quote.assetAmount)) {
    throw invalid(
      "INVALID_REQUEST",
      `amount: converted to ${asset.code} it is ${quote.assetAmount}, more than the largest amount allowed (less than 10^${MAX_INTEGER_DIGITS})`,
    );
  }
  const amountToPay = parseAmount(quote.assetAmount);
  if (fractionDigits(amountToPay) > asset.decimals || !fitsStorage(amountToPay)) {
    throw new DomainError("unavailable", "WALLET_UNAVAILABLE", `the wallet quoted ${quote.assetAmount}, not an amount of ${asset.code}`);
  }
  if (isZero(amountToPay)) throw invalid("INVALID_REQUEST", `amount: is worth less than the smallest unit of ${asset.code}`);
  return { amountToPay, rate: quote.rate, rateAt: quote.rateAt };
}
