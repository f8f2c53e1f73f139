/**
 * Scalar functions of time (the model's TimeFunction), compiled once into closures that
 * give the value and its first and second time derivatives. Point forces use the value;
 * motors need all three (position, velocity and acceleration level constraints).
 *
 *   number                          c                         ḟ = 0,            f̈ = 0
 *   {offset, rate}                  offset + rate·t           ḟ = rate,         f̈ = 0
 *   {type:"sine", amplitude A, frequency ν (Hz), phase φ (rad), offset}
 *                                   offset + A sin(2πν t + φ) ḟ = 2πν A cos(·), f̈ = −(2πν)² A sin(·)
 *   {type:"table", points [[t_k, y_k]]}
 *                                   piecewise-linear interpolation, held constant (y_0 before
 *                                   t_0, y_last after t_last); ḟ = slope of the segment that
 *                                   contains t (segments are [t_k, t_{k+1}), so the derivative
 *                                   is right-continuous), 0 outside; f̈ = 0 (the distributional
 *                                   jumps at the breakpoints are not represented).
 */
import type { TimeFunctionSpec } from "../../../schemas/model";

export interface CompiledTimeFunction {
  /** f(t) */
  value(t: number): number;
  /** df/dt */
  rate(t: number): number;
  /** d²f/dt² */
  accel(t: number): number;
  /** True when f does not depend on t (then rate and accel are 0 everywhere). */
  readonly constant: boolean;
}

function constantFunction(c: number): CompiledTimeFunction {
  return { value: () => c, rate: () => 0, accel: () => 0, constant: true };
}

export function compileTimeFunction(spec: TimeFunctionSpec): CompiledTimeFunction {
  if (typeof spec === "number") return constantFunction(spec);
  switch (spec.type) {
    case "sine": {
      const { amplitude, frequency, phase, offset } = spec;
      const w = 2 * Math.PI * frequency;
      if (amplitude === 0 || w === 0) return constantFunction(offset + amplitude * Math.sin(phase));
      return {
        value: (t) => offset + amplitude * Math.sin(w * t + phase),
        rate: (t) => amplitude * w * Math.cos(w * t + phase),
        accel: (t) => -amplitude * w * w * Math.sin(w * t + phase),
        constant: false,
      };
    }
    case "table":
      return compileTable(spec.points);
    default: {
      // {type?: "linear", offset, rate}
      const offset = spec.offset ?? 0;
      const rate = spec.rate ?? 0;
      if (rate === 0) return constantFunction(offset);
      return {
        value: (t) => offset + rate * t,
        rate: () => rate,
        accel: () => 0,
        constant: false,
      };
    }
  }
}

/**
 * The largest |f(t)| over t ≥ 0 where f is bounded: a constant's |c|, a sine's
 * |offset| + |A|, a table's largest |y_k| (interpolated and held between its points); a
 * ramp (rate ≠ 0) grows without bound, by design: its largest over the first step [0, h],
 * max(|offset|, |offset + rate h|). What a model's command is checked at (inputs.ts).
 */
export function magnitudeBound(spec: TimeFunctionSpec, h: number): number {
  if (typeof spec === "number") return Math.abs(spec);
  switch (spec.type) {
    case "sine":
      return Math.abs(spec.offset ?? 0) + Math.abs(spec.amplitude);
    case "table":
      return spec.points.reduce((m, p) => Math.max(m, Math.abs(p[1])), 0);
    default: {
      const offset = spec.offset ?? 0;
      return Math.max(Math.abs(offset), Math.abs(offset + (spec.rate ?? 0) * h));
    }
  }
}

/**
 * Piecewise-linear table. Times are strictly ascending (the schema checks it). The segment
 * lookup remembers the last segment, so monotone sweeps in t (time stepping) cost O(1)
 * per call; a jump falls back to binary search. No allocation per call.
 */
function compileTable(points: readonly (readonly [number, number])[]): CompiledTimeFunction {
  const n = points.length;
  if (n === 1) return constantFunction(points[0][1]);
  const ts = Float64Array.from(points, (p) => p[0]);
  const ys = Float64Array.from(points, (p) => p[1]);
  let hint = 0;
  /** Index k with ts[k] ≤ t < ts[k+1], for ts[0] ≤ t < ts[n−1]. */
  const segment = (t: number): number => {
    if (ts[hint] <= t && t < ts[hint + 1]) return hint;
    if (hint + 2 < n && ts[hint + 1] <= t && t < ts[hint + 2]) return ++hint;
    let lo = 0;
    let hi = n - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ts[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    hint = lo;
    return lo;
  };
  const first = ts[0];
  const last = ts[n - 1];
  return {
    value(t) {
      if (!(t > first)) return ys[0]; // also t = NaN → y_0 rather than NaN propagation
      if (t >= last) return ys[n - 1];
      const k = segment(t);
      const a = (t - ts[k]) / (ts[k + 1] - ts[k]);
      return ys[k] + a * (ys[k + 1] - ys[k]);
    },
    rate(t) {
      if (t < first || t >= last || Number.isNaN(t)) return 0;
      const k = segment(t);
      return (ys[k + 1] - ys[k]) / (ts[k + 1] - ts[k]);
    },
    accel: () => 0,
    constant: ys.every((y) => y === ys[0]),
  };
}
