/**
 * Amortized growth of the typed-array buffers the hot loops reuse: a buffer is replaced
 * only when a larger problem than ever before arrives (at least doubling), never per step.
 */
type Buffer = Float64Array | Int32Array | Uint8Array;

function larger<T extends Buffer>(a: T, n: number): T {
  const Ctor = a.constructor as new (length: number) => T;
  return new Ctor(Math.max(n, 2 * a.length));
}

/** a when it holds n entries, else a fresh zeroed one of its type (scratch: contents dropped). */
export function grow<T extends Buffer>(a: T, n: number): T {
  return a.length >= n ? a : larger(a, n);
}

/** a when it holds n entries, else a larger one of its type starting with a's contents. */
export function extend<T extends Buffer>(a: T, n: number): T {
  if (a.length >= n) return a;
  const b = larger(a, n);
  b.set(a);
  return b;
}
