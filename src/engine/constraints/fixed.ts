/**
 * Fixed (weld) joint: the attachment points coincide and the relative orientation of the
 * model pose is kept. With the world axes e₁, e₂, e₃ of the model pose stored in a's and
 * in b's frames at construction:
 *   0..2  p_b − p_a = 0 (m)
 *   3  e₁ₐ·e₂ᵦ = 0,  4  e₁ₐ·e₃ᵦ = 0,  5  e₂ₐ·e₃ᵦ = 0
 * (to first order rows 3–5 measure the relative rotation about −e₃, e₂ and −e₁). When
 * either body is a particle rows 3–5 are omitted (a particle has no orientation).
 * Reaction: rows 0..2 are the force on b at p_b, rows 3–5 a pure torque.
 */

import { dot3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";
import {
  dotJacobian,
  dotQuadraticPart,
  pointJacobian,
  pointQuadratic,
  pointResidual,
} from "./kinematics";
import { type Attachment, hasOrientation, PointRowsJoint } from "./pair-constraint";

/** (e_a index, e_b index) of rows 3, 4, 5. */
const PAIRS = [0, 1, 0, 2, 1, 2] as const;

export class FixedJoint extends PointRowsJoint {
  readonly aligns: boolean;
  /** e₁, e₂, e₃ in a's frame (0..8) and in b's frame (9..17). */
  private readonly local = new Float64Array(18);
  private readonly world = new Float64Array(18);

  constructor(id: string, sys: BodySystem, a: Attachment, b: Attachment) {
    const aligns = hasOrientation(sys, a.body) && hasOrientation(sys, b.body);
    super(id, "fixed", "joint", sys, a, b, aligns ? 6 : 3);
    this.aligns = aligns;
    const e = new Float64Array(3);
    for (let i = 0; i < 3; i++) {
      e.fill(0);
      e[i] = 1;
      this.toLocalA(e, this.local, 3 * i);
      this.toLocalB(e, this.local, 9 + 3 * i);
    }
  }

  private orient(): void {
    for (let i = 0; i < 3; i++) {
      this.worldA(this.local, 3 * i, this.world, 3 * i);
      this.worldB(this.local, 9 + 3 * i, this.world, 9 + 3 * i);
    }
  }

  residual(_t: number, out: Float64Array, off: number): void {
    this.refresh();
    pointResidual(this.k, out, off);
    if (!this.aligns) return;
    this.orient();
    const w = this.world;
    for (let r = 0; r < 3; r++)
      out[off + 3 + r] = dot3(w, 3 * PAIRS[2 * r], w, 9 + 3 * PAIRS[2 * r + 1]);
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    pointJacobian(this.k, jacA, jacB, 0);
    if (!this.aligns) return;
    this.orient();
    const w = this.world;
    for (let r = 0; r < 3; r++)
      dotJacobian(w, 3 * PAIRS[2 * r], w, 9 + 3 * PAIRS[2 * r + 1], jacA, jacB, 3 + r);
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    pointQuadratic(this.k, out, off);
    if (!this.aligns) return;
    this.orient();
    const w = this.world;
    for (let r = 0; r < 3; r++)
      out[off + 3 + r] = -dotQuadraticPart(
        this.k,
        w,
        3 * PAIRS[2 * r],
        w,
        9 + 3 * PAIRS[2 * r + 1],
      );
  }
}
