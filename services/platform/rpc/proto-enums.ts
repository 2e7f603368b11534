import type { DescEnum } from "@bufbuild/protobuf";
import type { GenEnum } from "@bufbuild/protobuf/codegenv2";

/**
 * Proto enums by name, as REST and the services spell them: the value's name
 * without the enum's prefix (INTERVAL_MONTH → "MONTH"). One lookup over the
 * generated descriptor instead of a copied name table per enum.
 */
export function enumName(schema: DescEnum, value: number): string {
  return schema.value[value]?.localName ?? "UNSPECIFIED";
}

/** The number for a name (0, the UNSPECIFIED value, for a name the enum does not have). */
export function enumValue<T extends number>(schema: GenEnum<T>, name: string): T {
  return (schema.values.find((v) => v.localName === name)?.number ?? 0) as T;
}
