import type { FallbackSelectModel } from "./views.ts";

/**
 * The funding fallback on the hosted pages (issue 26): two selects,
 * `fallbackAsset1` and `fallbackAsset2`, each "None" or one of the customer's
 * accounts that can pay the plan, tried in that order when the funding asset
 * cannot pay. Shared by the approval page (inside the approval form: the same
 * PIN approves both) and the self-service page (its own action).
 */
const FALLBACK_FIELDS = ["fallbackAsset1", "fallbackAsset2"] as const;
const ASSET_CODE = /^[A-Z0-9_]{1,16}$/;

interface FallbackOption {
  asset: string;
  name: string;
}

/** The two selects, with `selected` (in order) preselected; `key` makes the ids unique in the page. */
export function fallbackSelects(options: FallbackOption[], selected: readonly string[], key: string): FallbackSelectModel[] {
  return FALLBACK_FIELDS.map((field, i) => ({
    name: field,
    id: `${field}-${key}`,
    label: i === 0 ? "First fallback" : "Second fallback",
    options: [
      { value: "", label: "None", selected: !selected[i] },
      ...options.map((o) => ({ value: o.asset, label: `${o.name} (${o.asset})`, selected: selected[i] === o.asset })),
    ],
  }));
}

/**
 * The posted fallbacks in order, empties left out (a second without a first is
 * the only fallback). Refused in words before the service is asked: anything
 * but an asset code (a hand-made form), the same asset twice, the asset that
 * already pays.
 */
export function postedFallbacks(form: Record<string, string | undefined>, fundingAsset?: string): { assets: string[]; error?: string } {
  const posted = FALLBACK_FIELDS.map((f) => (form[f] ?? "").trim()).filter((a) => a !== "");
  // What the page shows again with an error: only values that look like asset codes.
  const assets = posted.filter((a) => ASSET_CODE.test(a));
  if (assets.length !== posted.length) return { assets, error: "Choose the fallback assets from the lists." };
  if (new Set(assets).size !== assets.length) return { assets, error: "Choose two different fallback assets, or None for the second." };
  if (fundingAsset && assets.includes(fundingAsset)) return { assets, error: `${fundingAsset} already pays: choose another asset as a fallback, or None.` };
  return { assets };
}
