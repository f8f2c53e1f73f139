/**
 * Plain JSON values as the engine keeps them: frozen, so that nothing can change a running
 * simulation's model behind its back, and without −0, which JSON cannot carry (it writes
 * 0), so that a recording or snapshot replays what ran.
 */

/** `value` with every object and array in it frozen (Object.freeze, recursively). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}

/**
 * `value` with every −0 in it made +0: a copy (frozen like the original) where there was
 * one, else `value` itself. Why: JSON writes −0 as 0, so a model, PATCH or input holding
 * −0 ran differently from its recording's and its snapshot's copy (a body placed at z = −0
 * in a cloth: the replay departed at once, bit-wise).
 */
export function withoutNegativeZeros<T>(value: T): T {
  if (!hasNegativeZero(value)) return value;
  const copy = JSON.parse(JSON.stringify(value)) as T;
  return Object.isFrozen(value) ? deepFreeze(copy) : copy;
}

function hasNegativeZero(v: unknown): boolean {
  if (typeof v === "number") return Object.is(v, -0);
  if (v === null || typeof v !== "object") return false;
  for (const x of Object.values(v)) if (hasNegativeZero(x)) return true;
  return false;
}
