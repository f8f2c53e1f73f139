/**
 * Prismatic (slider) joint along an axis given in world coordinates for the model pose.
 * With (n, u, w) the right-handed frame of the axis (kinematics.ts `axisFrame`), n, u, w
 * stored in a's frame and u, w in b's frame at construction, and d = p_b − p_a:
 *   0  d·u_a = 0,  1  d·w_a = 0              (m: p_b stays on the line through p_a along n)
 *   2  n_a·u_b = 0, 3  n_a·w_b = 0, 4  u_a·w_b = 0   (the relative orientation is locked)
 * Rows 2–4 vanish in the model pose whatever the orientations, so the model pose's
 * relative orientation is the one kept; rows 0–1 assume the model places p_b on a's line
 * (assembly moves it there otherwise). The free coordinate is d·n_a. When either body
 * is a particle rows 2–4 are omitted.
 * Reaction: rows 0–1 give the force λ₀u_a + λ₁w_a on b at p_b, rows 2–4 pure torques.
 */

import { dot3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";
import {
  alongJacobian,
  alongQuadraticPart,
  axisFrame,
  dotJacobian,
  dotQuadraticPart,
} from "./kinematics";
import { type Attachment, hasOrientation, PairConstraint } from "./pair-constraint";

export class PrismaticJoint extends PairConstraint {
  readonly aligns: boolean;
  /** n, u, w in a's frame (0..8); u, w in b's frame (9..14). */
  private readonly local = new Float64Array(15);
  /** World copies: n_a, u_a, w_a, u_b, w_b. */
  private readonly world = new Float64Array(15);

  constructor(id: string, sys: BodySystem, a: Attachment, b: Attachment, axis: ArrayLike<number>) {
    const aligns = hasOrientation(sys, a.body) && hasOrientation(sys, b.body);
    super(id, "prismatic", "joint", sys, a, b, aligns ? 5 : 2);
    this.aligns = aligns;
    const frame = new Float64Array(9);
    axisFrame(axis, frame);
    for (let i = 0; i < 3; i++) this.toLocalA(frame.subarray(3 * i, 3 * i + 3), this.local, 3 * i);
    this.toLocalB(frame.subarray(3, 6), this.local, 9);
    this.toLocalB(frame.subarray(6, 9), this.local, 12);
  }

  private orient(): void {
    for (let i = 0; i < 3; i++) this.worldA(this.local, 3 * i, this.world, 3 * i);
    this.worldB(this.local, 9, this.world, 9);
    this.worldB(this.local, 12, this.world, 12);
  }

  residual(_t: number, out: Float64Array, off: number): void {
    this.refresh();
    this.orient();
    const w = this.world;
    const d = this.k.d;
    out[off] = dot3(d, 0, w, 3);
    out[off + 1] = dot3(d, 0, w, 6);
    if (!this.aligns) return;
    out[off + 2] = dot3(w, 0, w, 9);
    out[off + 3] = dot3(w, 0, w, 12);
    out[off + 4] = dot3(w, 3, w, 12);
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    this.orient();
    const w = this.world;
    alongJacobian(this.k, w, 3, jacA, jacB, 0);
    alongJacobian(this.k, w, 6, jacA, jacB, 1);
    if (!this.aligns) return;
    dotJacobian(w, 0, w, 9, jacA, jacB, 2);
    dotJacobian(w, 0, w, 12, jacA, jacB, 3);
    dotJacobian(w, 3, w, 12, jacA, jacB, 4);
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    this.orient();
    const w = this.world;
    out[off] = -alongQuadraticPart(this.k, w, 3);
    out[off + 1] = -alongQuadraticPart(this.k, w, 6);
    if (!this.aligns) return;
    out[off + 2] = -dotQuadraticPart(this.k, w, 0, w, 9);
    out[off + 3] = -dotQuadraticPart(this.k, w, 0, w, 12);
    out[off + 4] = -dotQuadraticPart(this.k, w, 3, w, 12);
  }
}
