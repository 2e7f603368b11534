/**
 * CSV injection (OWASP "CSV Injection"): a spreadsheet runs a cell that
 * starts with = + - @ (or a tab or carriage return) as a formula. Such a cell
 * is prefixed with a single quote, which spreadsheets show as text. A plain
 * decimal number ("-12.5", a debit) is left as it is: it cannot be a formula,
 * and finance needs it to stay a number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

export function safeCell(value: string | null | undefined): string {
  if (value === null || value === undefined) return "";
  return FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
}
