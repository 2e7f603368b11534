import { expect } from "chai";
import path from "node:path";
import { readdirSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useTestSystem } from "../../support/system.ts";

/**
 * Random and boundary messages on every method of every service, through a
 * stock @grpc/grpc-js client (as an internal caller would send them). Whatever
 * the input, the answer is a result or a client error: never INTERNAL or
 * UNKNOWN (which would mean a stack trace in the log and a 500 at the edge).
 * Seeded, so a failure names the seed and the message to replay.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RANDOM_MESSAGES_PER_METHOD = Number(process.env.FUZZ_MESSAGES ?? 12);

interface FieldDescriptor {
  name: string;
  type: string;
  label: string;
  typeName?: string;
  proto3Optional?: boolean;
  oneofIndex?: number;
}
interface MessageDescriptor {
  field: FieldDescriptor[];
}

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("gRPC fuzz: every method, random and boundary input, never INTERNAL/UNKNOWN", function () {
  this.timeout(300_000);
  let merchantId: string;
  const clients: Record<string, grpc.Client> = {};
  // Each domain's own file, plus the subscriptions service's pricing.proto (issue 25).
  const protoFiles = [
    ...readdirSync(path.resolve("proto/billing")).map((d) => path.resolve(`proto/billing/${d}/v1/${d}.proto`)),
    path.resolve("proto/billing/subscriptions/v1/pricing.proto"),
  ];
  const definition = protoLoader.loadSync(protoFiles, { includeDirs: [path.resolve("proto")], keepCase: false, longs: String, enums: String, defaults: true });
  const services = Object.entries(definition).filter(([, def]) => !("format" in def)) as [string, protoLoader.ServiceDefinition][];
  // proto-loader names a field's message type fully (".pkg.Type") or, within the same package, relatively ("Type").
  const messageType = (typeName: string) => {
    const name = typeName.replace(/^\./, "");
    const found = definition[name] ?? Object.entries(definition).find(([key]) => key.endsWith(`.${name}`))?.[1];
    return (found as any).type as MessageDescriptor;
  };
  const enumValues = (typeName: string) =>
    (
      (definition[typeName.replace(/^\./, "")] as protoLoader.EnumTypeDefinition | undefined)?.type as unknown as
        | { value: { name: string; number: number }[] }
        | undefined
    )?.value ?? [];

  const sys = useTestSystem({ workerGroups: [] });
  before(async () => {
    merchantId = (await sys.createMerchant("Fuzz")).id;
    const pkg = grpc.loadPackageDefinition(definition) as any;
    for (const [name] of services) {
      const ctor = name.split(".").reduce((o, part) => o[part], pkg);
      clients[name] = new ctor(`127.0.0.1:${sys.system.servicesPort}`, grpc.credentials.createInsecure());
    }
  });
  after(async () => {
    for (const c of Object.values(clients)) c.close();
  });

  const random = mulberry32(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const someUuid = () => "xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx".replace(/x/g, () => Math.floor(random() * 16).toString(16));
  const STRINGS = () => [
    "",
    " ",
    "not-a-uuid",
    "00000000-0000-0000-0000-000000000000",
    someUuid(),
    merchantId,
    merchantId.toUpperCase(),
    "\u0000",
    "\ud800",
    "a".repeat(10_000),
    "😀",
    "-1",
    "0",
    "1.5",
    "1e400",
    "99999999999999999999999999999",
    "0.0000000000000000001",
    "{",
    "[]",
    '{"a":1}',
    "null",
    "USD",
    "BTC",
    "ETH",
    "USDT_TRON",
    "https://example.com/x",
    "user@example.com",
    "SELECT 1;--",
  ];
  const NUMBERS = ["0", "-1", "1", "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808", "59", "86400"];

  const valueFor = (field: FieldDescriptor, depth: number, mode: "random" | "empty" | "ids"): unknown => {
    const one = (): unknown => {
      switch (field.type) {
        case "TYPE_STRING":
          if (mode === "ids") return /(^|_)id$/.test(toSnake(field.name)) ? (field.name === "merchantId" ? merchantId : someUuid()) : pick(STRINGS());
          return pick(STRINGS());
        case "TYPE_BYTES":
          return Buffer.from(pick(STRINGS()));
        case "TYPE_BOOL":
          return random() < 0.5;
        case "TYPE_INT32":
        case "TYPE_INT64":
        case "TYPE_SINT32":
        case "TYPE_SINT64":
        case "TYPE_SFIXED32":
        case "TYPE_SFIXED64":
          return pick(NUMBERS);
        case "TYPE_UINT32":
        case "TYPE_UINT64":
        case "TYPE_FIXED32":
        case "TYPE_FIXED64":
          return pick(NUMBERS.filter((n) => !n.startsWith("-")));
        case "TYPE_DOUBLE":
        case "TYPE_FLOAT":
          return pick([0, -1, 1.5, 1e308, Number.NaN, Number.POSITIVE_INFINITY]);
        case "TYPE_ENUM": {
          const values = enumValues(field.typeName!);
          return random() < 0.7 && values.length ? pick(values).name : pick([0, 1, 2, -1, 999, 2147483647]);
        }
        case "TYPE_MESSAGE": {
          const typeName = field.typeName!;
          if (typeName === ".google.protobuf.Timestamp") return { seconds: pick(NUMBERS), nanos: pick([0, 999_999_999, -1]) };
          if (depth > 3) return {};
          return messageFor(messageType(typeName), depth + 1, mode);
        }
        default:
          return undefined;
      }
    };
    if (field.label === "LABEL_REPEATED") return Array.from({ length: Math.floor(random() * 4) }, one);
    return one();
  };

  const messageFor = (type: MessageDescriptor, depth = 0, mode: "random" | "empty" | "ids" = "random"): Record<string, unknown> => {
    if (mode === "empty") return {};
    const message: Record<string, unknown> = {};
    const oneofsTaken = new Set<number>();
    for (const field of type.field) {
      if (random() < 0.15) continue; // sometimes absent
      if (field.oneofIndex !== undefined && !field.proto3Optional) {
        if (oneofsTaken.has(field.oneofIndex)) continue;
        oneofsTaken.add(field.oneofIndex);
      }
      const value = valueFor(field, depth, mode);
      if (value !== undefined) message[field.name] = value;
    }
    return message;
  };

  const call = (service: string, method: string, request: object) =>
    new Promise<{ code: grpc.status; details: string } | undefined>((resolve) => {
      const md = new grpc.Metadata();
      md.set("authorization", `Bearer ${sys.config.internalApiToken}`);
      (clients[service] as any)[method](request, md, { deadline: Date.now() + 20_000 }, (err: grpc.ServiceError | null) =>
        resolve(err ? { code: err.code, details: err.details } : undefined),
      );
    });

  for (const [serviceName, service] of services) {
    for (const [methodName, method] of Object.entries(service)) {
      if (method.requestStream || method.responseStream) continue;
      it(`${serviceName.split(".").at(-1)}.${methodName}`, async () => {
        const type = method.requestType.type as unknown as MessageDescriptor;
        const messages = [
          messageFor(type, 0, "empty"),
          messageFor(type, 0, "ids"),
          { ...messageFor(type, 0, "ids"), merchantId: "" },
          { ...messageFor(type, 0, "ids"), merchantId: someUuid() },
          ...Array.from({ length: RANDOM_MESSAGES_PER_METHOD }, () => messageFor(type)),
        ];
        const failures: string[] = [];
        for (const message of messages) {
          const result = await call(serviceName, methodName, message);
          if (result && [grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED].includes(result.code)) {
            failures.push(
              `${grpc.status[result.code]} "${result.details}" for ${JSON.stringify(message, (_k, v) => (typeof v === "string" && v.length > 80 ? `${v.slice(0, 20)}…(${v.length})` : v))}`,
            );
          }
        }
        expect(failures, `seed ${SEED}:\n${failures.join("\n")}`).to.deep.equal([]);
      });
    }
  }
});

const toSnake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
