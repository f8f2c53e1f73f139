/**
 * Test helpers: random bodies for constraint tests (drawn from a seeded generator,
 * test/support/random.ts, passed in).
 */
import { type BodyInit, BodySystem, updateDerived } from "../../../src/engine/model/body-system";

export function randVec(r: () => number, scale = 1): [number, number, number] {
  return [scale * (2 * r() - 1), scale * (2 * r() - 1), scale * (2 * r() - 1)];
}

export function randQuat(r: () => number): [number, number, number, number] {
  const q = [2 * r() - 1, 2 * r() - 1, 2 * r() - 1, 2 * r() - 1];
  const n = Math.hypot(...q);
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

export type Kind = "rigid" | "particle" | "fixed";

export function randomBody(r: () => number, id: string, kind: Kind): BodyInit {
  const i = [0.5 + r(), 0.5 + r(), 0.5 + r()];
  const off = 0.1 * (2 * r() - 1);
  return {
    id,
    kind: kind === "particle" ? "particle" : "rigid",
    fixed: kind === "fixed",
    mass: 0.5 + 2 * r(),
    // a full symmetric positive definite inertia (diagonally dominant)
    inertia: [i[0], off, 0.5 * off, off, i[1], -off, 0.5 * off, -off, i[2]],
    position: randVec(r),
    orientation: kind === "particle" ? [1, 0, 0, 0] : randQuat(r),
    velocity: kind === "fixed" ? [0, 0, 0] : randVec(r, 2),
    angularVelocity: kind === "rigid" ? randVec(r, 3) : [0, 0, 0],
  };
}

export function system(bodies: BodyInit[]): BodySystem {
  return new BodySystem(bodies);
}

/** q ← exp(δθ) ⊗ q for body b (world-frame rotation vector δθ, rad). */
export function turn(sys: BodySystem, b: number, d: number[]): void {
  const a = Math.hypot(d[0], d[1], d[2]);
  const s = a === 0 ? 0 : Math.sin(a / 2) / a;
  const [w1, x1, y1, z1] = [Math.cos(a / 2), s * d[0], s * d[1], s * d[2]];
  const q = sys.quat;
  const [w2, x2, y2, z2] = [q[4 * b], q[4 * b + 1], q[4 * b + 2], q[4 * b + 3]];
  q[4 * b] = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2;
  q[4 * b + 1] = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2;
  q[4 * b + 2] = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2;
  q[4 * b + 3] = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2;
  updateDerived(sys);
}
