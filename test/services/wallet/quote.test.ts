import { expect } from "chai";
import { Code, type Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { WalletService } from "../../../proto/gen/billing/wallet/v1/wallet_pb.ts";
import { useTestSystem } from "../../support/system.ts";
import { rpcFailure, walletClient } from "./wallet-client.ts";

describe("wallet assets and quotes over RPC", () => {
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

  const quote = async (amount: string, currency: string, asset: string, rounding = "") => wallet.quote({ amount, currency, asset, rounding });

  it("lists the registry with networks, decimals, settlement currency and confirmations", async () => {
    const { assets } = await wallet.listAssets({});
    expect(assets.map((a) => [a.code, a.network, a.decimals, a.currency, a.requiredConfirmations])).to.deep.equal([
      ["USDT_TRON", "TRON", 6, "USD", 19],
      ["USDC_ETH", "ETHEREUM", 6, "USD", 12],
      ["BTC", "BITCOIN", 8, "BTC", 2],
      ["ETH", "ETHEREUM", 18, "ETH", 12],
    ]);
  });

  it("converts 10 USD to BTC at 60000 with exact 8-decimal rounding in the requested direction", async () => {
    const up = await quote("10", "USD", "BTC", "up");
    expect(up).to.include({ assetAmount: "0.00016667", rate: "0.000016666666666667" });
    expect((await quote("10", "USD", "BTC", "down")).assetAmount).to.equal("0.00016666");
    expect((await quote("10", "USD", "BTC", "half-even")).assetAmount).to.equal("0.00016667");
    expect((await quote("10", "USD", "BTC")).assetAmount).to.equal("0.00016667");
    const rateAt = timestampDate(up.rateAt!).getTime();
    expect(Math.abs(rateAt - sys.system.clock!.clock.now().getTime())).to.be.lessThan(5000);
  });

  it("settles stablecoins 1:1 in their currency, rounding only to the asset's decimals", async () => {
    expect(await quote("10.5", "USD", "USDT_TRON", "up")).to.include({ assetAmount: "10.5", rate: "1" });
    // Half-even on a tie: 0.0000005 → 0, 0.0000015 → 0.000002; "up" always rounds away from zero.
    expect((await quote("0.0000005", "USD", "USDC_ETH", "half-even")).assetAmount).to.equal("0");
    expect((await quote("0.0000015", "USD", "USDC_ETH", "half-even")).assetAmount).to.equal("0.000002");
    expect((await quote("0.0000005", "USD", "USDC_ETH", "up")).assetAmount).to.equal("0.000001");
    expect((await quote("1", "ETH", "ETH")).assetAmount).to.equal("1");
  });

  it("crosses any pair via USD with one final rounding", async () => {
    expect(await quote("10", "EUR", "USDT_TRON", "up")).to.include({ assetAmount: "10.8", rate: "1.08" });
    expect(await quote("100", "TRX", "ETH")).to.include({ assetAmount: "0.004", rate: "0.00004" });
    expect((await quote("1", "GBP", "BTC", "up")).assetAmount).to.equal("0.00002117");
    expect((await quote("1", "GBP", "BTC", "down")).assetAmount).to.equal("0.00002116");
    expect((await quote("0.01", "BTC", "USDC_ETH")).assetAmount).to.equal("600");
    expect((await quote("1", "ETH", "BTC")).assetAmount).to.equal("0.05");
    expect((await quote("1", "USD", "ETH", "up")).assetAmount).to.equal("0.000333333333333334");
    expect((await quote("1", "USD", "ETH", "down")).assetAmount).to.equal("0.000333333333333333");
  });

  it("refuses bad input naming the field", async () => {
    const cases: [Parameters<typeof quote>, string][] = [
      [["ten", "USD", "BTC"], "amount:"],
      [["10", "XYZ", "BTC"], "currency:"],
      [["10", "USD", "DOGE"], "asset:"],
      [["10", "USD", "BTC", "ceiling"], "rounding: must be one of up, down, half-even"],
    ];
    for (const [args, message] of cases) {
      const failure = await rpcFailure(quote(...args));
      expect(failure, args.join(" ")).to.include({ code: Code.InvalidArgument, errorCode: "INVALID_REQUEST" });
      expect(failure.message).to.include(message);
    }
  });
});
