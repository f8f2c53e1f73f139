/**
 * The exponential map of SO(3) and its left Jacobian acting on vectors, for the Lie-group
 * (SE(3)) update of rigid bodies (integrators/generalized-alpha.ts, acceleration-step.ts).
 *
 * For a rotation vector φ (rad, world frame), θ = |φ|:
 *   exp(φ̂) u = u + (sin θ/θ) φ × u + ((1 − cos θ)/θ²) φ × (φ × u)          (Rodrigues)
 *   T(φ) u  = u + ((1 − cos θ)/θ²) φ × u + ((θ − sin θ)/θ³) φ × (φ × u)
 * T is the left Jacobian of SO(3), the matrix V of SE(3)'s exponential
 * exp([φ; u]) = [exp(φ̂), T(φ) u]: a body moved by the twist increment [φ; u] (world frame,
 * about its centre of mass) rotates by exp(φ̂) and its centre moves by T(φ) u. It satisfies
 * T(φ) φ̂ = exp(φ̂) − I, so a screw motion about a fixed axis is reproduced exactly.
 * Near θ = 0 the coefficients use their Taylor series (relative error below 1e-16).
 */
import type { Vec } from "./vec3";

/** Coefficients (sin θ/θ, (1 − cos θ)/θ², (θ − sin θ)/θ³) of the two maps, in `out`. */
function coefficients(t2: number, out: Float64Array): void {
  if (t2 < 1e-6) {
    // series to θ⁶: errors O(θ⁸) < 1e-24 relative to the leading terms
    out[0] = 1 - (t2 / 6) * (1 - (t2 / 20) * (1 - t2 / 42));
    out[1] = 0.5 * (1 - (t2 / 12) * (1 - (t2 / 30) * (1 - t2 / 56)));
    out[2] = (1 / 6) * (1 - (t2 / 20) * (1 - (t2 / 42) * (1 - t2 / 72)));
    return;
  }
  const t = Math.sqrt(t2);
  const s = Math.sin(t);
  out[0] = s / t;
  out[1] = (1 - Math.cos(t)) / t2;
  out[2] = (t - s) / (t2 * t);
}

const coef = new Float64Array(3);

/**
 * out = c₁ u + c₂ φ × u + c₃ φ × (φ × u) for the map's coefficients; out may alias u
 * (every component of u is read before out is written).
 */
function apply(
  out: Vec,
  io: number,
  c1: number,
  c2: number,
  c3: number,
  phi: Vec,
  ip: number,
  u: Vec,
  iu: number,
): void {
  const px = phi[ip];
  const py = phi[ip + 1];
  const pz = phi[ip + 2];
  const ux = u[iu];
  const uy = u[iu + 1];
  const uz = u[iu + 2];
  const cx = py * uz - pz * uy;
  const cy = pz * ux - px * uz;
  const cz = px * uy - py * ux;
  const dx = py * cz - pz * cy;
  const dy = pz * cx - px * cz;
  const dz = px * cy - py * cx;
  out[io] = c1 * ux + c2 * cx + c3 * dx;
  out[io + 1] = c1 * uy + c2 * cy + c3 * dy;
  out[io + 2] = c1 * uz + c2 * cz + c3 * dz;
}

/** out = exp(φ̂) u (u rotated by the rotation vector φ); out may alias u. */
export function so3Rotate(out: Vec, io: number, phi: Vec, ip: number, u: Vec, iu: number): void {
  coefficients(phi[ip] ** 2 + phi[ip + 1] ** 2 + phi[ip + 2] ** 2, coef);
  apply(out, io, 1, coef[0], coef[1], phi, ip, u, iu);
}

/** out = T(φ) u, the left Jacobian of SO(3) at φ applied to u; out may alias u. */
export function so3LeftJacobian(
  out: Vec,
  io: number,
  phi: Vec,
  ip: number,
  u: Vec,
  iu: number,
): void {
  coefficients(phi[ip] ** 2 + phi[ip + 1] ** 2 + phi[ip + 2] ** 2, coef);
  apply(out, io, 1, coef[1], coef[2], phi, ip, u, iu);
}
