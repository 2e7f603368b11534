import { expect } from "chai";
import { Code, type Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { advanceClock } from "../../../services/sandbox/advance-clock.ts";
import { LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS } from "../../../services/wallet/login-throttle.ts";
import { PIN_LOCK_MS, PIN_MAX_ATTEMPTS } from "../../../services/wallet/verify-pin.ts";
import { useTestSystem } from "../../support/system.ts";
import { rpcFailure, uniqueEmail, walletClient } from "./wallet-client.ts";

const PASSWORD = "correct horse battery";
const PIN = "246810";

describe("wallet login throttle and PIN lockout", () => {
  let client: ReturnType<typeof walletClient>;
  let wallet: Client<typeof WalletService>;

  const sys = useTestSystem({ services: ["wallet"], gateway: false, workerGroups: [] });
  before(async () => {
    client = walletClient(sys);
    wallet = client.wallet;
  });
  after(async () => {
    client?.close();
  });

  const newUser = async () => (await wallet.createWalletUser({ email: uniqueEmail(), password: PASSWORD, pin: PIN })).user!;
  const advance = (ms: number) => advanceClock(sys.context(), Math.ceil(ms / 1000) + 1);
  const serviceNow = () => sys.system.clock!.clock.now().getTime();

  describe("VerifyPassword", () => {
    it("accepts the right password and answers a wrong one and an unknown email alike", async () => {
      const user = await newUser();
      expect((await wallet.verifyPassword({ email: user.email.toUpperCase(), password: PASSWORD })).user!.id).to.equal(user.id);
      const wrong = await rpcFailure(wallet.verifyPassword({ email: user.email, password: "wrong password" }));
      const unknown = await rpcFailure(wallet.verifyPassword({ email: uniqueEmail(), password: PASSWORD }));
      expect(wrong).to.deep.equal(unknown);
      expect(wrong).to.include({ code: Code.Unauthenticated, errorCode: "INVALID_CREDENTIALS" });
    });

    it("spends about the same time on an unknown email as on a wrong password (a dummy hash is verified)", async () => {
      const user = await newUser();
      const median = async (call: () => Promise<unknown>) => {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const start = performance.now();
          await call().catch(() => {});
          times.push(performance.now() - start);
        }
        return times.sort((a, b) => a - b)[2]!;
      };
      const wrong = await median(() => wallet.verifyPassword({ email: user.email, password: "wrong password" }));
      const unknown = await median(() => wallet.verifyPassword({ email: uniqueEmail(), password: "wrong password" }));
      expect(unknown / wrong).to.be.within(0.33, 3);
    });

    it(`refuses the ${LOGIN_MAX_FAILURES + 1}th try after ${LOGIN_MAX_FAILURES} failures, even with the right password, until the window ends`, async () => {
      const user = await newUser();
      for (let i = 0; i < LOGIN_MAX_FAILURES; i++) {
        expect((await rpcFailure(wallet.verifyPassword({ email: user.email, password: `wrong-${i}` }))).errorCode).to.equal("INVALID_CREDENTIALS");
      }
      const limited = await rpcFailure(wallet.verifyPassword({ email: user.email, password: PASSWORD }));
      expect(limited).to.include({ code: Code.ResourceExhausted, errorCode: "LOGIN_RATE_LIMITED" });
      // Counted per email: another user is not affected.
      const other = await newUser();
      await wallet.verifyPassword({ email: other.email, password: PASSWORD });

      await advance(LOGIN_WINDOW_MS);
      expect((await wallet.verifyPassword({ email: user.email, password: PASSWORD })).user!.id).to.equal(user.id);
    });

    it("counts parallel guesses exactly: never more than the limit of password checks per window", async () => {
      const user = await newUser();
      const results = await Promise.all(
        Array.from({ length: LOGIN_MAX_FAILURES + 5 }, (_, i) => rpcFailure(wallet.verifyPassword({ email: user.email, password: `guess-${i}` }))),
      );
      const codes = results.map((r) => r.errorCode);
      expect(codes.filter((c) => c === "INVALID_CREDENTIALS")).to.have.length(LOGIN_MAX_FAILURES);
      expect(codes.filter((c) => c === "LOGIN_RATE_LIMITED")).to.have.length(5);
    });

    it("throttles unknown emails too (no way to tell them apart)", async () => {
      const email = uniqueEmail();
      for (let i = 0; i < LOGIN_MAX_FAILURES; i++) await rpcFailure(wallet.verifyPassword({ email, password: "whatever-1" }));
      expect((await rpcFailure(wallet.verifyPassword({ email, password: "whatever-1" }))).errorCode).to.equal("LOGIN_RATE_LIMITED");
    });

    it("clears the failures on a successful login", async () => {
      const user = await newUser();
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < LOGIN_MAX_FAILURES - 1; i++) await rpcFailure(wallet.verifyPassword({ email: user.email, password: "nope-nope" }));
        await wallet.verifyPassword({ email: user.email, password: PASSWORD });
      }
    });
  });

  describe("VerifyPin", () => {
    it(`locks the PIN after ${PIN_MAX_ATTEMPTS} wrong tries for 15 minutes of service time, then allows it again`, async () => {
      const user = await newUser();
      for (let left = PIN_MAX_ATTEMPTS - 1; left >= 1; left--) {
        expect(await wallet.verifyPin({ walletUserId: user.id, pin: "000000" })).to.include({ ok: false, locked: false, attemptsLeft: left });
      }
      const before = serviceNow();
      const locking = await wallet.verifyPin({ walletUserId: user.id, pin: "000000" });
      expect(locking).to.include({ ok: false, locked: true, attemptsLeft: 0 });
      const until = timestampDate(locking.lockedUntil!).getTime();
      expect(until).to.be.within(before + PIN_LOCK_MS - 1000, serviceNow() + PIN_LOCK_MS + 1000);

      // While locked the PIN is not even checked: the right one is refused too.
      expect(await wallet.verifyPin({ walletUserId: user.id, pin: PIN })).to.include({ ok: false, locked: true, attemptsLeft: 0 });
      const shown = await wallet.getWalletUser({ id: user.id });
      expect(shown.user).to.include({ pinLocked: true });

      await advance(PIN_LOCK_MS);
      expect(await wallet.verifyPin({ walletUserId: user.id, pin: PIN })).to.include({ ok: true, locked: false, attemptsLeft: PIN_MAX_ATTEMPTS });
      expect((await wallet.getWalletUser({ id: user.id })).user).to.include({ pinLocked: false });
    });

    it("resets the count on a correct PIN", async () => {
      const user = await newUser();
      for (let i = 0; i < PIN_MAX_ATTEMPTS - 1; i++) await wallet.verifyPin({ walletUserId: user.id, pin: "999999" });
      expect(await wallet.verifyPin({ walletUserId: user.id, pin: PIN })).to.include({ ok: true, attemptsLeft: PIN_MAX_ATTEMPTS });
      expect(await wallet.verifyPin({ walletUserId: user.id, pin: "999999" })).to.include({ ok: false, locked: false, attemptsLeft: PIN_MAX_ATTEMPTS - 1 });
    });

    it("counts parallel wrong PINs one by one (row lock): exactly one try locks, later ones see the lock", async () => {
      const user = await newUser();
      const results = await Promise.all(Array.from({ length: 8 }, () => wallet.verifyPin({ walletUserId: user.id, pin: "135790" })));
      const counted = results
        .filter((r) => !r.locked)
        .map((r) => r.attemptsLeft)
        .sort();
      expect(counted).to.deep.equal([1, 2, 3, 4]);
      expect(results.filter((r) => r.locked)).to.have.length(4);
      const [row] = await sys.sql("select pin_failed_attempts from wallet_users where id = ?", [user.id]);
      expect(row.pin_failed_attempts).to.equal(PIN_MAX_ATTEMPTS);
    });

    it("refuses a malformed PIN without counting it, and an unknown user with 404", async () => {
      const user = await newUser();
      expect(await rpcFailure(wallet.verifyPin({ walletUserId: user.id, pin: "12345" }))).to.include({ code: Code.InvalidArgument });
      expect(await wallet.verifyPin({ walletUserId: user.id, pin: "000000" })).to.include({ attemptsLeft: PIN_MAX_ATTEMPTS - 1 });
      expect(await rpcFailure(wallet.verifyPin({ walletUserId: "8b6d1a52-8f43-4f0e-9a51-0b1c2d3e4f50", pin: PIN }))).to.include({
        code: Code.NotFound,
        errorCode: "WALLET_USER_NOT_FOUND",
      });
    });
  });
});
