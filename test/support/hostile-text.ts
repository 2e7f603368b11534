import { expect } from "chai";

/** Text that tries to become markup on a page: out of text (`<script>`, `<img onerror>`) and out of both kinds of attribute quotes. */
export const HOSTILE = `<script>alert("x")</script>' onmouseover='alert(1)' "><img src=x onerror=alert(2)>&amp;`;
export const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * What is left of the page once every escaped copy of HOSTILE is taken out must hold no piece of it:
 * a value rendered raw (or half-escaped) anywhere would leave one.
 */
export function expectOnlyEscaped(html: string, where: string): number {
  const copies = html.split(escaped(HOSTILE));
  const rest = copies.join("");
  for (const piece of ["<script", "alert(", "onmouseover", "onerror", "<img"]) expect(rest, `${where}: raw "${piece}"`).not.to.include(piece);
  return copies.length - 1;
}
