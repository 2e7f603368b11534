/**
 * Length limits count characters (code points), as AJV's maxLength and
 * Postgres varchar(n) do, not UTF-16 units: "😀" is one character, not two.
 */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
