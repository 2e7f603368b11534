import { amount, compare, convert, convertInverse, formatAmount, isZero, max, zero } from "../../../services/platform/money.ts";
import { amountText } from "../page-text.ts";

/** One currency's bars, laid out for the template's server-rendered SVG (the page runs no script). */
export interface VolumeChart {
  currency: string;
  title: string;
  description: string;
  width: number;
  height: number;
  bars: { x: number; y: number; width: number; height: number; date: string; text: string }[];
  /** The same figures as a table (the chart's text alternative). */
  rows: { date: string; text: string; charges: number }[];
  axis: { top: string; first: string; last: string };
}

const WIDTH = 620;
const HEIGHT = 140;
const PLOT = 134;

/**
 * Bars of charged volume per UTC day, one chart per currency. Heights are
 * pixels (a proportion of the day to the largest day, worked out with the
 * money module so no amount becomes a float); the amounts shown are exact.
 */
export function volumeCharts(days: readonly { date: string; currency: string; amount: string; charges: number }[]): VolumeChart[] {
  const currencies = [...new Set(days.map((d) => d.currency))];
  return currencies.map((currency) => {
    const series = days.filter((d) => d.currency === currency);
    const top = series.reduce((m, d) => max(m, amount(d.amount)), zero());
    const step = WIDTH / Math.max(series.length, 1);
    const total = series.reduce((sum, d) => sum.plus(amount(d.amount)), zero());
    const bars = series.map((d, i) => {
      const h = isZero(top) ? 0 : Number(formatAmount(convertInverse(convert(amount(d.amount), String(PLOT), 6, "half-even"), top, 1, "half-even")));
      const height = compare(amount(d.amount), zero()) > 0 ? Math.max(h, 1) : 0;
      return {
        x: Math.round(i * step * 10) / 10 + 1,
        y: HEIGHT - 2 - height,
        width: Math.max(Math.round((step - 2) * 10) / 10, 1),
        height,
        date: d.date,
        text: amountText(d.amount, currency),
      };
    });
    const first = series[0]?.date ?? "";
    const last = series.at(-1)?.date ?? "";
    return {
      currency,
      title: `Charged volume in ${currency}, per day`,
      description: `Succeeded charges from ${first} to ${last} (UTC): ${amountText(formatAmount(total), currency)} in all; the largest day ${amountText(formatAmount(top), currency)}.`,
      width: WIDTH,
      height: HEIGHT,
      bars,
      rows: series.map((d) => ({ date: d.date, text: amountText(d.amount, currency), charges: d.charges })),
      axis: { top: amountText(formatAmount(top), currency), first, last },
    };
  });
}
