import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException } from "@mikro-orm/core";
import type { UseCaseContext } from "../platform/use-case.ts";
import { conflict } from "../platform/errors.ts";
import { WalletUser, type WalletUserRow } from "./entities.ts";
import { checkPassword, checkPin, walletEmail } from "./wallet-input.ts";
import { hashSecret } from "../platform/secret-hashing.ts";

interface CreateWalletUserInput {
  email: string;
  password: string;
  pin: string;
}

/** Accounts are not opened here: each opens with its first movement (or freeze). */
export async function createWalletUser(ctx: UseCaseContext, input: CreateWalletUserInput): Promise<WalletUserRow> {
  const email = walletEmail(input.email);
  checkPassword(input.password);
  checkPin(input.pin);
  // Fail fast before paying for two slow hashes; the unique index settles races.
  if (await ctx.em.findOne(WalletUser, { email })) throw alreadyExists(email);
  const [passwordHash, pinHash] = await Promise.all([hashSecret(input.password), hashSecret(input.pin)]);
  try {
    return await ctx.em.transactional(async (em) => {
      const now = ctx.clock.now();
      return em.create(WalletUser, {
        id: randomUUID(),
        email,
        passwordHash,
        pinHash,
        status: "ACTIVE",
        pinFailedAttempts: 0,
        pinLockedUntil: null,
        createdAt: now,
        updatedAt: now,
      });
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw alreadyExists(email);
    throw err;
  }
}

const alreadyExists = (email: string) => conflict("WALLET_USER_ALREADY_EXISTS", `email: a wallet user with email ${email} already exists`);
