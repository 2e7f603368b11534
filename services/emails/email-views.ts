import { fileURLToPath } from "node:url";
import { Eta } from "eta";
import type { EmailKind } from "./contract.ts";

/**
 * Each email in plain text and HTML from Eta templates in `templates/`:
 * `email-html.eta` rendered with autoEscape on (a merchant's or plan's name
 * cannot open a tag), `email-text.eta` with it off (plain text has nothing to
 * escape, and `&amp;` would be wrong there). The subject is made here, one
 * line: control characters are dropped.
 */
export interface EmailModel {
  merchantName: string;
  planName: string;
  /** Lines of label and value, already formatted. */
  lines: { label: string; value: string }[];
  /** The sentence that says why this email came. */
  lead: string;
  /** What the customer can do, and where. */
  action?: { text: string; url: string } | undefined;
  /** A second link (the receipt's PDF). */
  extraLink?: { text: string; url: string } | undefined;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export interface EmailViews {
  render(kind: EmailKind, subject: string, model: EmailModel): RenderedEmail;
}

export function emailViews(): EmailViews {
  const views = fileURLToPath(new URL("./templates/", import.meta.url));
  const html = new Eta({ views, autoEscape: true, cache: true });
  // Plain text keeps its line breaks: only control tags ending in `-%>` drop the newline after them.
  const text = new Eta({ views, autoEscape: false, cache: true, autoTrim: false });
  return {
    render: (_kind, subject, model) => ({
      subject: oneLine(subject),
      html: html.render("/email-html", { ...model, subject: oneLine(subject) }),
      text: text.render("/email-text", model),
    }),
  };
}

// eslint-style: control characters (CR, LF, tabs and the rest) never reach a header.
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
