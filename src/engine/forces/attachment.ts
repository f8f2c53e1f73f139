/**
 * A point fixed in a body's frame, the place where springs, dampers and point forces act.
 *
 * For body b with centre of mass x, rotation R (body → world), velocity v and world angular
 * velocity ω, and a body-frame point p:
 *   offset       r   = R p            (world frame, from the centre of mass)
 *   position     x_p = x + r
 *   velocity     v_p = v + ω × r
 * Under a position perturbation [δx, δθ] (q ← exp(δθ) ⊗ q, so δR = [δθ]× R):
 *   δr = δθ × r = −[r]× δθ,   δx_p = δx − [r]× δθ,   δv_p = ω × δr = −[ω]×[r]× δθ
 * and under a velocity perturbation [δv, δω]: δv_p = δv − [r]× δω.
 * A force f applied at the point gives the generalized force [f; r × f] (torque about the
 * centre of mass) on a rigid body and [f] on a particle (a particle has no orientation:
 * R = I, r = p is constant, and a moment about it has no dof to act on).
 * Ground (body −1) and fixed bodies are immovable: x_p = x + R p is constant, v_p = 0, and
 * forces on them are not accumulated (they have no dofs).
 */
import { BodyKind, type BodySystem } from "../model/body-system";

export class PointAttachment {
  /** Body index, −1 for ground. */
  readonly body: number;
  /** Solve block of the body, −1 when it has no dofs (ground, fixed). */
  readonly block: number;
  /** True for a dynamic rigid body: the point then has rotational dofs (6-dof block). */
  readonly rotational: boolean;
  /** The point in the body frame (m). */
  readonly local = new Float64Array(3);
  /** World-frame offset r = R p from the centre of mass (m). */
  readonly r = new Float64Array(3);
  /** World position x_p (m). */
  readonly x = new Float64Array(3);
  /** World velocity v_p (m/s). */
  readonly v = new Float64Array(3);
  /** World angular velocity of the body (0 unless rotational) (rad/s). */
  readonly omega = new Float64Array(3);

  constructor(
    private readonly sys: BodySystem,
    body: number,
    point: ArrayLike<number> = [0, 0, 0],
  ) {
    if (!Number.isInteger(body) || body < -1 || body >= sys.numBodies)
      throw new Error(`body index ${body} out of range (−1 for ground, 0..${sys.numBodies - 1})`);
    this.body = body;
    this.block = body < 0 ? -1 : sys.block[body];
    this.rotational = body >= 0 && sys.kind[body] === BodyKind.RIGID;
    for (let k = 0; k < 3; k++) this.local[k] = point[k] ?? 0;
    this.update();
  }

  /** True when the point is off the centre of mass of a dynamic rigid body. */
  get hasMomentArm(): boolean {
    const p = this.local;
    return this.rotational && (p[0] !== 0 || p[1] !== 0 || p[2] !== 0);
  }

  /** Refreshes r, x_p, v_p and ω from the body state (uses sys.rotation: updateDerived). */
  update(): void {
    const { sys, body, local: p, r, x, v, omega } = this;
    if (body < 0) {
      r.fill(0);
      x.set(p);
      v.fill(0);
      omega.fill(0);
      return;
    }
    const i = 3 * body;
    if (sys.hasOrientation[body]) {
      const R = sys.rotation;
      const o = 9 * body;
      r[0] = R[o] * p[0] + R[o + 1] * p[1] + R[o + 2] * p[2];
      r[1] = R[o + 3] * p[0] + R[o + 4] * p[1] + R[o + 5] * p[2];
      r[2] = R[o + 6] * p[0] + R[o + 7] * p[1] + R[o + 8] * p[2];
    } else r.set(p);
    x[0] = sys.pos[i] + r[0];
    x[1] = sys.pos[i + 1] + r[1];
    x[2] = sys.pos[i + 2] + r[2];
    if (this.block < 0) {
      v.fill(0);
      omega.fill(0);
      return;
    }
    if (this.rotational) {
      omega[0] = sys.omega[i];
      omega[1] = sys.omega[i + 1];
      omega[2] = sys.omega[i + 2];
    } else omega.fill(0);
    const w = omega;
    v[0] = sys.vel[i] + (w[1] * r[2] - w[2] * r[1]);
    v[1] = sys.vel[i + 1] + (w[2] * r[0] - w[0] * r[2]);
    v[2] = sys.vel[i + 2] + (w[0] * r[1] - w[1] * r[0]);
  }

  /**
   * Adds sign·f (f = a[ia..ia+2], world frame, N) applied at the point: force on the body
   * and, for a rigid body, the moment r × (sign·f) about its centre of mass. Uses the r of
   * the last update(). Nothing for bodies without dofs.
   */
  addForce(a: ArrayLike<number>, ia: number, sign: number): void {
    if (this.block < 0) return;
    const { sys, r } = this;
    const i = 3 * this.body;
    const fx = sign * a[ia];
    const fy = sign * a[ia + 1];
    const fz = sign * a[ia + 2];
    sys.force[i] += fx;
    sys.force[i + 1] += fy;
    sys.force[i + 2] += fz;
    if (!this.rotational) return;
    sys.torque[i] += r[1] * fz - r[2] * fy;
    sys.torque[i + 1] += r[2] * fx - r[0] * fz;
    sys.torque[i + 2] += r[0] * fy - r[1] * fx;
  }
}
