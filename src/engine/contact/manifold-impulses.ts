/**
 * The share of load among the points of one contact manifold, as reported: the part of the
 * impulses that no body feels, taken out.
 *
 * A face resting on a face is several contact points of one body pair with one normal
 * (box–plane, box–box: four). Their impulses act on the two bodies only through their
 * resultant wrench, so the rigid problem fixes the wrench and leaves the share among the
 * points open: with k points, k normal impulses for three equations (the force along n and
 * the moments about the two tangents) and 2k tangential ones for three (the tangential
 * force and the moment about n). The solvers (Gauss–Seidel sweeps: nncg, pgs) never move an
 * iterate along that null space, since no local velocity sees it, so the share is the warm
 * start's, carried from step to step, wherever it came from: a box that slid and stopped
 * kept tangential impulses that cancel (Σ f_t ~1e-15 N, Σ|f_t| 22 % of m g after a slide
 * with spin at μ = 0.3) and normal impulses in a twist pattern (2.72 / 2.18 N on the two
 * diagonals), in the reported contact forces of every later step.
 *
 * After each step, for every manifold of k ≥ 2 points that all rest (|u_i|∞ at most the
 * contact solver's tolerance at the end-of-step velocities, so that every distribution of
 * the same wrench inside the cones is as much a solution), the reported impulses are the
 * distribution of least norm with the same wrench:
 *  - normal impulses: min Σ r_n,i² subject to Σ r_n,i = F_n and Σ r_n,i d_i = m (d_i the
 *    point's offset from the points' centroid in the tangent plane; the moment of a normal
 *    impulse depends on the in-plane offset only, and the lever arms of the two bodies
 *    differ from the point by offsets along n):
 *        r_n,i = F_n/k + βᵀ d_i,    S β = m,    S = Σ d_i d_iᵀ (2 × 2),
 *    the linear pressure of a rigid face on an elastic foundation; S singular (points on a
 *    line) is solved in its range, which reproduces a distribution that has no null space
 *    (two points). Kept only when every r_n,i ≥ 0.
 *  - tangential impulses: min Σ |f_i|²/r_n,i subject to Σ f_i = F_t and Σ (d_i × f_i)·n = M_n
 *    (d_i now from the normal impulses' centre c = Σ r_n,i p_i / Σ r_n,i):
 *        f_i = r_n,i (a + b n × d_i),    a = F_t / Σ r_n,i,    b = M_n / Σ r_n,i |d_i|²,
 *    the friction of a rigid slip (a translation a and a spin b about c, weighted by the
 *    load). Kept only when every f_i lies in its cone (|f_i| ≤ μ_i r_n,i).
 * At rest on a flat floor the tangential wrench is zero, and so is every tangential force
 * reported. The in-plane moment that tangential impulses make through the points' offsets
 * along n (penetrations differing by up to the projection's tolerance) is not held: the
 * reported forces' moment differs from the applied one by that lever (at most the
 * projection tolerance) times the change of the tangential forces.
 *
 * The solver's own share stays in the warm-start memory: starting each step from the
 * least-norm share instead (the same residual, the share being invisible to it) slowed the
 * sweeps wherever they stop at the tolerance before the stack rests: the box-stack example
 * (four cubes, pgs, 200 sweeps) ended 60 and 115 of 2000 steps above the tolerance at
 * μ = 0.3 and 0.5 instead of 15 and 27, its cubes swaying at up to 1e-3 m/s instead of
 * 5e-5 m/s. What the bodies do is the solver's; what the forces are reported to be is the
 * least-norm member of the same solution.
 *
 * Manifolds are runs of consecutive contacts of the set with the same bodies and the same
 * normal (bitwise: the pair functions give one normal per manifold), as the narrow phase
 * pushes a pair's points together.
 */
import type { ContactDim } from "../solvers/nonsmooth/types";
import type { ContactSet } from "./contact-set";

/** Relative slack of the cone test (round-off of the products above). */
const CONE_SLACK = 1e-12;

export class ManifoldImpulses {
  /** Planar offsets (t1, t2 components) of a manifold's points, grown on demand. */
  private offsets = new Float64Array(64);

  /**
   * Replaces, in place, the impulses r (dim per contact, local frames of `set`) of every
   * manifold whose contacts all rest (|u_i|∞ ≤ tolerance, m/s, at the bodies' current
   * velocities) by the least-norm distribution of the same wrench (file comment); mu[i] is
   * contact i's friction coefficient (read when dim = 3). Contacts with a triangle side
   * (fem–fem) are left as they are.
   */
  spread(
    set: ContactSet,
    r: Float64Array,
    dim: ContactDim,
    mu: Float64Array,
    tolerance: number,
  ): void {
    const nc = set.count;
    const { bodyA, bodyB, frame, triangle } = set;
    let start = 0;
    while (start < nc) {
      let end = start + 1;
      const o = 9 * start;
      while (
        end < nc &&
        triangle[start] === 0 &&
        triangle[end] === 0 &&
        bodyA[end] === bodyA[start] &&
        bodyB[end] === bodyB[start] &&
        frame[9 * end] === frame[o] &&
        frame[9 * end + 1] === frame[o + 1] &&
        frame[9 * end + 2] === frame[o + 2]
      )
        end++;
      if (end - start >= 2 && resting(set, dim, start, end, tolerance)) {
        this.spreadNormal(set, r, dim, start, end);
        if (dim === 3) this.spreadTangential(set, r, mu, start, end);
      }
      start = end;
    }
  }

  /**
   * offsets[2j], offsets[2j+1] = (t1, t2) components of p_i − c for the manifold's points
   * i = start + j, with c the centre weighted by w (the normal impulses, stride dim) or, with
   * w null, the centroid. Returns the sum of the weights (k when unweighted).
   */
  private planarOffsets(
    set: ContactSet,
    start: number,
    end: number,
    w: Float64Array | null,
    dim: number,
  ): number {
    const k = end - start;
    if (this.offsets.length < 2 * k)
      this.offsets = new Float64Array(Math.max(2 * k, 2 * this.offsets.length));
    const { offsets } = this;
    const { point, frame } = set;
    const o = 9 * start;
    let sw = 0;
    let c1 = 0;
    let c2 = 0;
    for (let j = 0; j < k; j++) {
      const p = 3 * (start + j);
      const x1 =
        point[p] * frame[o + 3] + point[p + 1] * frame[o + 4] + point[p + 2] * frame[o + 5];
      const x2 =
        point[p] * frame[o + 6] + point[p + 1] * frame[o + 7] + point[p + 2] * frame[o + 8];
      offsets[2 * j] = x1;
      offsets[2 * j + 1] = x2;
      const wj = w === null ? 1 : w[dim * (start + j)];
      sw += wj;
      c1 += wj * x1;
      c2 += wj * x2;
    }
    if (!(sw > 0)) return 0;
    c1 /= sw;
    c2 /= sw;
    for (let j = 0; j < k; j++) {
      offsets[2 * j] -= c1;
      offsets[2 * j + 1] -= c2;
    }
    return sw;
  }

  /** The normal impulses of contacts start..end−1: least norm, same force and moments. */
  private spreadNormal(
    set: ContactSet,
    r: Float64Array,
    dim: ContactDim,
    start: number,
    end: number,
  ): void {
    const k = end - start;
    this.planarOffsets(set, start, end, null, dim);
    const { offsets } = this;
    let fn = 0;
    let m1 = 0;
    let m2 = 0;
    let s11 = 0;
    let s12 = 0;
    let s22 = 0;
    let scale = 0;
    for (let j = 0; j < k; j++) {
      const rn = r[dim * (start + j)];
      const d1 = offsets[2 * j];
      const d2 = offsets[2 * j + 1];
      fn += rn;
      m1 += rn * d1;
      m2 += rn * d2;
      s11 += d1 * d1;
      s12 += d1 * d2;
      s22 += d2 * d2;
      scale = Math.max(scale, rn);
    }
    if (!(fn > 0)) return;
    // β = S⁺ m: S is symmetric 2 × 2; a determinant at round-off of its trace² is a line of
    // points (rank 1, β along its direction) or one point (rank 0, β = 0)
    const tr = s11 + s22;
    const det = s11 * s22 - s12 * s12;
    let b1 = 0;
    let b2 = 0;
    if (det > 1e-12 * tr * tr) {
      b1 = (s22 * m1 - s12 * m2) / det;
      b2 = (s11 * m2 - s12 * m1) / det;
    } else if (tr > 0) {
      // S = tr·e eᵀ on its range, e the unit direction of the line: β = e (e·m)/tr
      // (its column of the larger diagonal entry, ≥ tr/2 > 0, normalized)
      const c1 = s11 >= s22 ? s11 : s12;
      const c2 = s11 >= s22 ? s12 : s22;
      const l = Math.hypot(c1, c2);
      const e1 = c1 / l;
      const e2 = c2 / l;
      const em = (e1 * m1 + e2 * m2) / tr;
      b1 = e1 * em;
      b2 = e2 * em;
    }
    const mean = fn / k;
    for (let j = 0; j < k; j++)
      if (mean + b1 * offsets[2 * j] + b2 * offsets[2 * j + 1] < -CONE_SLACK * scale) return;
    for (let j = 0; j < k; j++)
      r[dim * (start + j)] = Math.max(0, mean + b1 * offsets[2 * j] + b2 * offsets[2 * j + 1]);
  }

  /** The tangential impulses of contacts start..end−1: least load-weighted norm, same wrench. */
  private spreadTangential(
    set: ContactSet,
    r: Float64Array,
    mu: Float64Array,
    start: number,
    end: number,
  ): void {
    const k = end - start;
    const sw = this.planarOffsets(set, start, end, r, 3);
    const { offsets } = this;
    if (!(sw > 0)) return;
    let f1 = 0;
    let f2 = 0;
    let mn = 0;
    let inertia = 0;
    for (let j = 0; j < k; j++) {
      const i = 3 * (start + j);
      const d1 = offsets[2 * j];
      const d2 = offsets[2 * j + 1];
      f1 += r[i + 1];
      f2 += r[i + 2];
      // (d × f)·n with n = t1 × t2
      mn += d1 * r[i + 2] - d2 * r[i + 1];
      inertia += r[i] * (d1 * d1 + d2 * d2);
    }
    const a1 = f1 / sw;
    const a2 = f2 / sw;
    const b = inertia > 0 ? mn / inertia : 0;
    // f_i = r_n,i (a + b n × d_i), n × d = (−d2, d1) in (t1, t2)
    for (let j = 0; j < k; j++) {
      const c = start + j;
      const rn = r[3 * c];
      const g1 = rn * (a1 - b * offsets[2 * j + 1]);
      const g2 = rn * (a2 + b * offsets[2 * j]);
      const lim = mu[c] * rn;
      if (g1 * g1 + g2 * g2 > lim * lim * (1 + CONE_SLACK)) return;
    }
    for (let j = 0; j < k; j++) {
      const i = 3 * (start + j);
      const rn = r[i];
      r[i + 1] = rn * (a1 - b * offsets[2 * j + 1]);
      r[i + 2] = rn * (a2 + b * offsets[2 * j]);
    }
  }
}

/** Every contact start..end−1 of `set` moves by at most `tolerance` (m/s) in each row. */
function resting(
  set: ContactSet,
  dim: ContactDim,
  start: number,
  end: number,
  tolerance: number,
): boolean {
  for (let i = start; i < end; i++)
    for (let k = 0; k < dim; k++) if (!(Math.abs(set.rowVelocity(i, k)) <= tolerance)) return false;
  return true;
}
