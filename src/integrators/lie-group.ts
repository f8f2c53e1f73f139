/**
 * The Lie-group (SE(3)) form of the step of acceleration-step.ts, for rigid bodies
 * (Brüls, Cardona & Arnold, "Lie group generalized-α time integration of constrained
 * flexible multibody systems", Mech. Mach. Theory 48, 2012), written with the engine's
 * world-frame variables.
 *
 * A rigid body's configuration is the pose (x, R) ∈ SE(3) of its centre-of-mass frame and
 * its velocity the body-frame twist V = (Rᵀẋ, Rᵀω). A step moves the pose by the
 * exponential of a twist increment and adds increments to V in the body frame:
 *   (x, R)_{t+h} = (x, R)_t ∘ exp(Δ),   V_{t+h} = V_pred + c_v A
 * with A the body-frame twist derivative V̇ (or a pseudo-acceleration built from it).
 * Expressed in the world frame at t (multiplying the body-frame vectors by R_t), with the
 * rotation increment φ (world rotation vector) and the translation increment u:
 *   R_{t+h} = exp(φ̂) R_t,   x_{t+h} = x_t + T(φ) u              (math/so3.ts)
 *   v_{t+h} = exp(φ̂) v_pre,   ω_{t+h} = exp(φ̂) ω_pre          ([v; ω]_pre = v_pred + c_v a)
 * where a = R_t V̇ is the unknown of the step (the twist derivative expressed in the world
 * frame at t). The momentum balance of the body-frame twist, m (v̇_b + ω_b × v_b) = Rᵀf and
 * J ω̇_b + ω_b × J ω_b = Rᵀτ, reads in the world frame at t + h
 *   m (exp(φ̂) a_v + ω × v) = f,   I_w exp(φ̂) a_ω + ω × I_w ω = τ,
 * the second being the world Euler equations (the gyroscopic term is a force effector,
 * forces/gyroscopic.ts); the first gains the transport term m ω × v (the twist derivative
 * of a body turning about a point off its centre of mass is zero, its centre's
 * acceleration ẍ = ω × v being centripetal).
 *
 * Why: a screw motion (a body turning uniformly about a fixed axis: a wheel on its
 * hinge, a crank at constant speed) has V constant and V̇ = 0, so the step reproduces it
 * exactly at any step size, where the R³ × SO(3) update (x moved along a polynomial)
 * leaves the circle by O(h³ω³ r) per step and the joint forces feed that error back into
 * the spin. Particles are unchanged (V = ẋ in the world frame).
 *
 * The iteration matrix keeps the R³ × SO(3) form (the derivatives of exp(φ̂) and T(φ)
 * with respect to the unknown are O(hω) relative to it): Newton converges linearly at a
 * rate of about hω/2 per iteration to the exact solution of the Lie-group equations.
 */
import { so3LeftJacobian, so3Rotate } from "../math/so3";
import { BodyKind, type BodySystem } from "../model/body-system";

/**
 * Turns the generalized increment `inc` (world frame at t: [u; φ] per rigid body) into the
 * engine's position increment [T(φ) u; φ], carries the velocities `v` ([v; ω]_pre on
 * entry) to t + h by exp(φ̂), and writes exp(φ̂) a into `aEnd` (the twist derivative in
 * the world frame at t + h). Particles: `aEnd` = a, nothing else changes.
 */
export function applyScrewIncrement(
  sys: BodySystem,
  inc: Float64Array,
  v: Float64Array,
  a: Float64Array,
  aEnd: Float64Array,
): void {
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0) continue;
    if (sys.kind[b] !== BodyKind.RIGID) {
      aEnd[d] = a[d];
      aEnd[d + 1] = a[d + 1];
      aEnd[d + 2] = a[d + 2];
      continue;
    }
    const p = d + 3;
    so3LeftJacobian(inc, d, inc, p, inc, d);
    so3Rotate(v, d, inc, p, v, d);
    so3Rotate(v, p, inc, p, v, p);
    so3Rotate(aEnd, d, inc, p, a, d);
    so3Rotate(aEnd, p, inc, p, a, p);
  }
}

/**
 * x ← exp(φ̂) x per rigid body (both 3-vectors of its 6 dofs), φ the rotation increment
 * of the last step in `inc`: carries a generalized vector expressed in the world frame at
 * t (an acceleration memory) to the world frame at t + h.
 */
export function carryToEnd(sys: BodySystem, inc: Float64Array, x: Float64Array): void {
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0 || sys.kind[b] !== BodyKind.RIGID) continue;
    so3Rotate(x, d, inc, d + 3, x, d);
    so3Rotate(x, d + 3, inc, d + 3, x, d + 3);
  }
}

/**
 * out −= m ω × v on the translational dofs of each rigid body, at the current state: the
 * transport term of the twist balance (file comment), a generalized force (N).
 */
export function addTransportForce(sys: BodySystem, out: Float64Array): void {
  const { vel, omega } = sys;
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0 || sys.kind[b] !== BodyKind.RIGID) continue;
    const m = sys.mass[b];
    const i = 3 * b;
    const wx = omega[i];
    const wy = omega[i + 1];
    const wz = omega[i + 2];
    const vx = vel[i];
    const vy = vel[i + 1];
    const vz = vel[i + 2];
    out[d] -= m * (wy * vz - wz * vy);
    out[d + 1] -= m * (wz * vx - wx * vz);
    out[d + 2] -= m * (wx * vy - wy * vx);
  }
}

/**
 * a ← the twist derivative (world frame) of the world acceleration [ẍ; ω̇] at the current
 * state: a_v = ẍ − ω × v per rigid body, ω̇ unchanged.
 */
export function worldToTwistAcceleration(sys: BodySystem, a: Float64Array): void {
  const { vel, omega } = sys;
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0 || sys.kind[b] !== BodyKind.RIGID) continue;
    const i = 3 * b;
    a[d] -= omega[i + 1] * vel[i + 2] - omega[i + 2] * vel[i + 1];
    a[d + 1] -= omega[i + 2] * vel[i] - omega[i] * vel[i + 2];
    a[d + 2] -= omega[i] * vel[i + 1] - omega[i + 1] * vel[i];
  }
}
