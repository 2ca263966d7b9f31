/**
 * Saturating token arithmetic. Token counts are non-negative safe integers; inputs that
 * are negative, NaN or fractional are coerced instead of leaking into budgets, and results
 * never wrap or go below zero.
 */

/** Coerces a limit to a non-negative safe integer: NaN and negatives → 0, +∞ and huge → MAX_SAFE_INTEGER. */
export function toCount(value: number | undefined): number {
  if (value === undefined || Number.isNaN(value) || value <= 0) return 0;
  if (value >= Number.MAX_SAFE_INTEGER) return Number.MAX_SAFE_INTEGER;
  return Math.floor(value);
}

/** `a − b`, saturating at 0. */
export function satSub(a: number, b: number): number {
  return a > b ? a - b : 0;
}

/**
 * `floor(a × num / den)` for a non-negative safe integer `a` and small positive integers,
 * computed exactly (no intermediate product above MAX_SAFE_INTEGER).
 */
export function mulDivFloor(a: number, num: number, den: number): number {
  // BigInt keeps the product exact near MAX_SAFE_INTEGER; budgets are resolved once per request.
  return Number((BigInt(a) * BigInt(num)) / BigInt(den));
}
