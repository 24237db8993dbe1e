/**
 * The order listings have always used (`localeCompare`), without ICU's collator where it cannot
 * differ: the first `localeCompare` of a process sets the collator up, some 6 ms of a short
 * command's start. For the texts One Works writes itself, code-unit order is the same order:
 * `toISOString()` times have every separator at the same place and differ only in digits, and
 * generated session ids hold only lower-case letters, digits and `-` (`-` < digits < letters
 * either way). Anything else is compared by `localeCompare`, as before.
 */

const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PLAIN_TEXT = /^[a-z0-9-]*$/;

/** Orders two recorded times (createdAt, updatedAt) as `a.localeCompare(b)` does. */
export function compareTimes(a: string, b: string): number {
  if (CANONICAL_TIME.test(a) && CANONICAL_TIME.test(b)) return codeUnitOrder(a, b);
  return a.localeCompare(b);
}

/** Orders two session ids as `a.localeCompare(b)` does. */
export function compareIds(a: string, b: string): number {
  if (PLAIN_TEXT.test(a) && PLAIN_TEXT.test(b)) return codeUnitOrder(a, b);
  return a.localeCompare(b);
}

function codeUnitOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
