/**
 * All bilateral constraints of a model stacked into one system of m = numRows equations:
 *   C(q, t) = 0,   G u = −Ct  (G = Cq, m × numDofs),   G u̇ = Qc,
 * constraint k owning rows rowOffset[k] .. rowOffset[k+1]. G is a CsrMatrix whose
 * pattern is fixed at construction (row r has the 3 or 6 columns of each dynamic body of
 * its constraint, ascending); `updateJacobian` refreshes its values without allocating.
 * Ground and fixed bodies have no columns.
 *
 * Multipliers follow constraint.ts: the constraint forces on the bodies are Gᵀλ, so
 * M u̇ = f + Gᵀλ. (The assembly analysis solves [M Gᵀ; G 0][a; λ] = [f; Qc], whose λ is
 * the negative of this one, and converts; see src/engine/analysis/assembly.ts.)
 *
 * Reactions: one JointState per constraint, in order: the joints in model order, then
 * the motors in model order, each under its own id. A joint's entry holds its own rows
 * only; a motor's entry is the drive's force/torque on the joint's body b (a revolute
 * motor: force 0 and the drive torque about the axis; a prismatic motor: the drive force
 * along the axis, torque 0), so the joint's total action on b is the sum of the two.
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { CsrMatrix } from "../math/csr";
import { BodyKind, type BodySystem } from "../model/body-system";
import type { Constraint } from "./constraint";

/** Body entries per row: a and b, or the up to four ends of a mimic's two joints. */
export const ROW_ENTRIES = 4;

export class ConstraintSet {
  readonly constraints: readonly Constraint[];
  readonly numRows: number;
  readonly numDofs: number;
  /** True when some constraint depends on t explicitly (Ct may be non-zero). */
  readonly timeDependent: boolean;
  /** First row of each constraint; length constraints.length + 1. */
  readonly rowOffset: Int32Array;
  /** Constraint index of each row. */
  readonly rowConstraint: Int32Array;
  /** The constraint Jacobian G = Cq (values valid after `updateJacobian`). */
  readonly G: CsrMatrix;
  /**
   * Up to ROW_ENTRIES body entries per row r, in column order, at [4r] .. [4r+3], the
   * present ones first: body index (−1 when absent), its first dof, its width (3 or 6)
   * and the offset of its first entry in G.values. Used to build G M⁻¹ Gᵀ (schur.ts).
   */
  readonly rowBody: Int32Array;
  readonly rowDof: Int32Array;
  readonly rowWidth: Int32Array;
  readonly rowSlot: Int32Array;
  /**
   * G's columns by body, for the gathered Gᵀ y (multiplyTranspose): dynamic body k (in
   * dof order) has its first dof at colDof[k], colWidth[k] columns (3 or 6), and its
   * entries in G at colRow[p], colSlot[p] (row, offset of its first value) for p in
   * colStart[k] .. colStart[k+1], in row order (and entry order within a row).
   */
  private readonly colDof: Int32Array;
  private readonly colWidth: Int32Array;
  private readonly colStart: Int32Array;
  private readonly colRow: Int32Array;
  private readonly colSlot: Int32Array;

  private readonly jacA: Float64Array;
  /** chainIncrements' a and b of each body's turn. */
  private readonly expA: Float64Array;
  private readonly expB: Float64Array;
  private readonly jacB: Float64Array;
  private readonly jacMore: Float64Array;
  /**
   * For constraint k, end i (0: a, 1: b, 2..: moreBodies) at [4k + i]: the entry index of
   * that body in its rows, −1 if it has none (ground, fixed).
   */
  private readonly entry: Int8Array;
  /** Scratch of addGeometricStiffness: the rotation blocks of a and b. */
  private readonly stiffA = new Float64Array(9);
  private readonly stiffB = new Float64Array(9);
  /** Whether some constraint's velocity rows change as its bodies turn (velocityRows). */
  readonly hasVelocityCurvature: boolean;

  constructor(
    readonly sys: BodySystem,
    constraints: readonly Constraint[],
  ) {
    this.constraints = constraints;
    this.numDofs = sys.numDofs;
    this.expA = new Float64Array(sys.numBodies);
    this.expB = new Float64Array(sys.numBodies);
    this.timeDependent = constraints.some((c) => c.timeDependent);
    this.hasVelocityCurvature = constraints.some((c) => c.addVelocityCurvature !== undefined);
    const nc = constraints.length;
    this.rowOffset = new Int32Array(nc + 1);
    let maxRows = 0;
    for (let k = 0; k < nc; k++) {
      this.rowOffset[k + 1] = this.rowOffset[k] + constraints[k].rows;
      maxRows = Math.max(maxRows, constraints[k].rows);
    }
    const m = this.rowOffset[nc];
    this.numRows = m;
    this.rowConstraint = new Int32Array(m);
    const E = ROW_ENTRIES;
    this.rowBody = new Int32Array(E * m).fill(-1);
    this.rowDof = new Int32Array(E * m).fill(-1);
    this.rowWidth = new Int32Array(E * m);
    this.rowSlot = new Int32Array(E * m).fill(-1);
    this.entry = new Int8Array(E * nc).fill(-1);
    this.jacA = new Float64Array(6 * maxRows);
    this.jacB = new Float64Array(6 * maxRows);
    this.jacMore = new Float64Array(6 * (E - 2) * maxRows);

    const width = (b: number) =>
      b < 0 || sys.dofOffset[b] < 0 ? 0 : sys.kind[b] === BodyKind.RIGID ? 6 : 3;
    const rowPtr = new Int32Array(m + 1);
    for (let k = 0; k < nc; k++) {
      const c = constraints[k];
      const all = [c.bodyA, c.bodyB, ...(c.moreBodies ?? [])];
      if (all.length > E)
        throw new Error(`${c.category} "${c.id}" spans ${all.length} bodies, at most ${E}`);
      const ends = all
        .map((body, which) => ({ body, which }))
        .filter((e) => width(e.body) > 0)
        .sort((x, y) => sys.dofOffset[x.body] - sys.dofOffset[y.body]);
      ends.forEach((e, i) => {
        this.entry[E * k + e.which] = i;
      });
      const w = ends.reduce((s, e) => s + width(e.body), 0);
      for (let r = this.rowOffset[k]; r < this.rowOffset[k + 1]; r++) {
        this.rowConstraint[r] = k;
        rowPtr[r + 1] = rowPtr[r] + w;
        let slot = rowPtr[r];
        ends.forEach((e, i) => {
          this.rowBody[E * r + i] = e.body;
          this.rowDof[E * r + i] = sys.dofOffset[e.body];
          this.rowWidth[E * r + i] = width(e.body);
          this.rowSlot[E * r + i] = slot;
          slot += width(e.body);
        });
      }
    }
    const colIdx = new Int32Array(rowPtr[m]);
    for (let r = 0; r < m; r++)
      for (let i = E * r; i < E * r + E; i++) {
        const s = this.rowSlot[i];
        if (s < 0) break;
        for (let c = 0; c < this.rowWidth[i]; c++) colIdx[s + c] = this.rowDof[i] + c;
      }
    this.G = new CsrMatrix(m, sys.numDofs, rowPtr, colIdx, new Float64Array(rowPtr[m]));

    const dynamic: number[] = [];
    for (let b = 0; b < sys.numBodies; b++) if (sys.dofOffset[b] >= 0) dynamic.push(b);
    dynamic.sort((x, y) => sys.dofOffset[x] - sys.dofOffset[y]);
    const entries = dynamic.map(() => [] as number[]);
    const index = new Map(dynamic.map((b, k) => [b, k]));
    for (let r = 0; r < m; r++)
      for (let i = E * r; i < E * r + E && this.rowSlot[i] >= 0; i++)
        entries[index.get(this.rowBody[i])!].push(r, this.rowSlot[i]);
    this.colDof = Int32Array.from(dynamic, (b) => sys.dofOffset[b]);
    this.colWidth = Int32Array.from(dynamic, width);
    this.colStart = new Int32Array(dynamic.length + 1);
    for (let k = 0; k < dynamic.length; k++)
      this.colStart[k + 1] = this.colStart[k] + entries[k].length / 2;
    const all = entries.flat();
    this.colRow = Int32Array.from({ length: all.length / 2 }, (_, p) => all[2 * p]);
    this.colSlot = Int32Array.from({ length: all.length / 2 }, (_, p) => all[2 * p + 1]);
  }

  /**
   * Refreshes G = Cq(q, t) for the current configuration; returns G. A constraint with
   * jacobianInto (spherical joints) writes its rows into G's values itself; the others'
   * blocks (a, b, then moreBodies, rows×6 each) are copied to G's entries of their body,
   * 3 or 6 per row (rowSlot, rowWidth): one loop over the ends, the set's arrays held in
   * locals. (On the 100-link chain these copies took about twice as long as the joints'
   * Jacobians themselves, 5.4 vs 2.5 µs.)
   */
  updateJacobian(t: number): CsrMatrix {
    const { jacA, jacB, jacMore, G, entry, constraints, rowOffset, rowSlot, rowWidth } = this;
    const E = ROW_ENTRIES;
    const v = G.values;
    for (let k = 0; k < constraints.length; k++) {
      const c = constraints[k];
      const r0 = rowOffset[k];
      if (c.jacobianInto !== undefined) {
        // the two ends' first slots and widths, one row of G apart from row to row
        const ea = entry[E * k];
        const eb = entry[E * k + 1];
        c.jacobianInto(
          t,
          v,
          ea < 0 ? -1 : rowSlot[E * r0 + ea],
          ea < 0 ? 0 : rowWidth[E * r0 + ea],
          eb < 0 ? -1 : rowSlot[E * r0 + eb],
          eb < 0 ? 0 : rowWidth[E * r0 + eb],
          G.rowPtr[r0 + 1] - G.rowPtr[r0],
        );
        continue;
      }
      c.jacobian(t, jacA, jacB, jacMore);
      const rows = rowOffset[k + 1] - r0;
      for (let x = 0; x < E; x++) {
        const e = entry[E * k + x];
        if (e < 0) continue;
        // end x's block: jacA, jacB, or moreBodies' (x − 2)-th block in jacMore
        const jac = x === 0 ? jacA : x === 1 ? jacB : jacMore;
        const j0 = x < 2 ? 0 : 6 * (x - 2) * rows;
        for (let i = 0; i < rows; i++) {
          const re = E * (r0 + i) + e;
          const o = rowSlot[re];
          const j = j0 + 6 * i;
          v[o] = jac[j];
          v[o + 1] = jac[j + 1];
          v[o + 2] = jac[j + 2];
          if (rowWidth[re] === 3) continue;
          v[o + 3] = jac[j + 3];
          v[o + 4] = jac[j + 4];
          v[o + 5] = jac[j + 5];
        }
      }
    }
    return G;
  }

  /**
   * Adds s·K_g to the iteration matrix m, K_g the geometric stiffness of the constraint
   * forces at the multipliers λ (N, N·m): the stabilizing (negative semidefinite) part of the symmetric part of ∂(Cqᵀλ)/∂q at fixed λ, the
   * term of a Newton step's Jacobian that the forces of a loaded joint contribute when the
   * bodies turn (Cqᵀλ is evaluated at each iterate, so ∂(Cqᵀλ)/∂q belongs in the
   * derivative of the residual M a − f − Cqᵀλ; the stepper adds it with s = −c_x, the
   * position change per acceleration change). Without it Newton contracts only linearly
   * on a loaded chain — at a rate that grows with the tension times the step squared over
   * the links' inertia (θ ≈ 0.35–0.45 for every correction, fresh or not, on the
   * benchmark's 100-link chain at h = 1/240 s: 9.2 iterations a step to 1e-6, and steps
   * the whip makes fail) — and quadratically with it (2.1 iterations a step there).
   *
   * Each constraint gives the diagonal rotation blocks of its two bodies
   * (Constraint.addRotationStiffness): the point rows of spherical, revolute and fixed
   * joints have exactly those (kinematics.ts, pointRotationStiffness; their skew part,
   * zero for a force along the lever, is left out to keep m symmetric). The alignment
   * rows of revolute, fixed and prismatic joints, distance links, motors and mimics add
   * nothing yet: their curvature couples the two bodies (off-diagonal blocks the matrix
   * pattern does not hold), and their rows converge as without this term. Particles and
   * ground have no rotation dofs here; fixed bodies no block.
   */
  addGeometricStiffness(lambda: Float64Array, m: SparseBlockMatrix, s: number): void {
    const { stiffA, stiffB } = this;
    for (let k = 0; k < this.constraints.length; k++) {
      const c = this.constraints[k];
      if (c.addRotationStiffness === undefined) continue;
      stiffA.fill(0);
      stiffB.fill(0);
      c.addRotationStiffness(lambda, this.rowOffset[k], stiffA, stiffB);
      this.addRotationBlock(m, c.bodyA, stiffA, s);
      this.addRotationBlock(m, c.bodyB, stiffB, s);
    }
  }

  /**
   * out ← G + s·∂(G u)/∂q at the current configuration and velocities u (G's layout; G as
   * of the last updateJacobian): the Jacobian of velocity-level rows G(x) v + Ct = 0 held at
   * a step's end x = x_t ⊕ (Δx_pred + c_x a), v = v_pred + c_v a, with respect to a, over
   * c_v, is G + (c_x/c_v) ∂(G v)/∂x: the stepper passes s = c_x/c_v. Without the second
   * term a Newton step on such rows converges only linearly, at about the rate s |ω| (the
   * bodies' angular speed ω): a whipping chain's links at 60–200 rad/s under Newmark's
   * γ = ½ at h = 1/240 s (s = h/2) contracted by 0.1–0.2 a correction, fresh factorization
   * or not, and needed 10–13 corrections a step to 1e-10.
   *
   * Each constraint with Constraint.addVelocityCurvature adds its term: the point rows of
   * spherical, revolute and fixed joints, exactly (kinematics.ts addPointRowsCurvature).
   * The alignment rows of revolute, fixed and prismatic joints, distance links, motors and
   * mimics add nothing, as in addGeometricStiffness: their rows converge as without it.
   */
  velocityRows(s: number, out: Float64Array): void {
    const { G, entry, constraints, rowOffset, rowSlot, rowWidth } = this;
    const E = ROW_ENTRIES;
    out.set(G.values);
    for (let k = 0; k < constraints.length; k++) {
      const c = constraints[k];
      if (c.addVelocityCurvature === undefined) continue;
      const r0 = rowOffset[k];
      const ea = entry[E * k];
      const eb = entry[E * k + 1];
      c.addVelocityCurvature(
        out,
        ea < 0 ? -1 : rowSlot[E * r0 + ea],
        ea < 0 ? 0 : rowWidth[E * r0 + ea],
        eb < 0 ? -1 : rowSlot[E * r0 + eb],
        eb < 0 ? 0 : rowWidth[E * r0 + eb],
        G.rowPtr[r0 + 1] - G.rowPtr[r0],
        s,
      );
    }
  }

  /** m's rotation sub-block (3..5, 3..5) of a moving rigid body += s·K. */
  private addRotationBlock(m: SparseBlockMatrix, body: number, K: Float64Array, s: number): void {
    if (body < 0 || this.sys.kind[body] !== BodyKind.RIGID) return;
    const b = this.sys.block[body];
    if (b >= 0) m.add3x3(b, b, 3, 3, K, 0, s);
  }

  /** out[0..m) = C(q, t). */
  residual(t: number, out: Float64Array): void {
    for (let k = 0; k < this.constraints.length; k++)
      this.constraints[k].residual(t, out, this.rowOffset[k]);
  }

  /** out[0..m) = Ct = ∂C/∂t. */
  velocityTerm(t: number, out: Float64Array): void {
    // Ct = 0 without time-dependent constraints: one fill rather than a typed-array fill
    // (a call) per constraint, at every velocity projection
    if (!this.timeDependent) {
      out.fill(0, 0, this.numRows);
      return;
    }
    for (let k = 0; k < this.constraints.length; k++)
      this.constraints[k].velocityTerm(t, out, this.rowOffset[k]);
  }

  /**
   * λᵀ ∂C/∂t (W) at time t: the power the rows' forces Gᵀλ (multipliers λ in N, N·m) take
   * out of a motion that keeps the velocity constraints G v + ∂C/∂t = 0, since their power
   * put in is λᵀ G v = −λᵀ ∂C/∂t. Nonzero on the motors' rows only (prescribed motions);
   * `scratch` of numRows.
   */
  prescribedPower(t: number, lambda: Float64Array, scratch: Float64Array): number {
    if (!this.timeDependent) return 0;
    this.velocityTerm(t, scratch);
    let power = 0;
    for (let r = 0; r < this.numRows; r++) power += lambda[r] * scratch[r];
    return power;
  }

  /** out[0..m) = Qc (G u̇ = Qc), for the current positions and velocities. */
  quadraticTerm(t: number, out: Float64Array): void {
    for (let k = 0; k < this.constraints.length; k++)
      this.constraints[k].quadraticTerm(t, out, this.rowOffset[k]);
  }

  /**
   * out = G x (G as of the last `updateJacobian`, or G's values at another configuration
   * in `values`, as multiplyTranspose). Row by row over its (at most ROW_ENTRIES) body entries of
   * 3 or 6 contiguous columns (rowSlot, rowDof, rowWidth), unrolled: no column index per
   * entry, twice as fast as the generic CSR product on a chain's G.
   */
  multiply(x: Float64Array, out: Float64Array, values = this.G.values): void {
    const { rowSlot, rowDof, rowWidth } = this;
    const v = values;
    for (let r = 0; r < this.numRows; r++) {
      let acc = 0;
      for (let e = ROW_ENTRIES * r; e < ROW_ENTRIES * r + ROW_ENTRIES; e++) {
        const s = rowSlot[e];
        if (s < 0) break;
        const d = rowDof[e];
        acc += v[s] * x[d] + v[s + 1] * x[d + 1] + v[s + 2] * x[d + 2];
        if (rowWidth[e] === 6)
          acc += v[s + 3] * x[d + 3] + v[s + 4] * x[d + 4] + v[s + 5] * x[d + 5];
      }
      out[r] = acc;
    }
  }

  /**
   * G ← G J, J the derivative of the exponential map at each rigid body's rotation
   * increment: G's rotation columns are derivatives with respect to a world-frame rotation
   * δθ at the current configuration (q ← exp(δθ) ⊗ q), while a configuration
   * q = exp(φ) ⊗ q₀ moves by δθ = J_l(φ) δφ when its increment φ changes by δφ (the left
   * Jacobian of SO(3): J_l(φ) = I + (1 − cos θ)/θ² [φ]× + (θ − sin θ)/θ³ [φ]×², θ = |φ|).
   * So rows of the configuration x₀ ⊕ u, differentiated with respect to u, are G J; a row
   * vector g then becomes g J = g + a (g × φ) + b ((g × φ) × φ). `increments` holds u by
   * dof (φ at a rigid body's dofs 3 … 5); particles' and translations' columns stay.
   */
  chainIncrements(increments: Float64Array): void {
    const { rowSlot, rowDof, rowWidth, rowBody, expA, expB, sys } = this;
    // a and b once a body (its rows share its turn), not once a row entry
    for (let body = 0; body < sys.numBodies; body++) {
      const o = sys.dofOffset[body];
      if (o < 0 || sys.kind[body] !== BodyKind.RIGID) continue;
      const x = increments[o + 3];
      const y = increments[o + 4];
      const z = increments[o + 5];
      const t2 = x * x + y * y + z * z;
      if (t2 < 1e-8) {
        // the series: a = ½ − θ²/24, b = 1/6 − θ²/120 (cancellation below θ ~ 1e-4)
        expA[body] = 0.5 - t2 / 24;
        expB[body] = 1 / 6 - t2 / 120;
      } else {
        const t = Math.sqrt(t2);
        expA[body] = (1 - Math.cos(t)) / t2;
        expB[body] = (t - Math.sin(t)) / (t2 * t);
      }
    }
    const v = this.G.values;
    for (let e = 0; e < rowSlot.length; e++) {
      const s = rowSlot[e];
      if (s < 0 || rowWidth[e] !== 6) continue;
      const d = rowDof[e] + 3;
      const x = increments[d];
      const y = increments[d + 1];
      const z = increments[d + 2];
      if (x * x + y * y + z * z === 0) continue;
      const a = expA[rowBody[e]];
      const b = expB[rowBody[e]];
      const g0 = v[s + 3];
      const g1 = v[s + 4];
      const g2 = v[s + 5];
      // c = g × φ, then c × φ
      const c0 = g1 * z - g2 * y;
      const c1 = g2 * x - g0 * z;
      const c2 = g0 * y - g1 * x;
      v[s + 3] = g0 + a * c0 + b * (c1 * z - c2 * y);
      v[s + 4] = g1 + a * c1 + b * (c2 * x - c0 * z);
      v[s + 5] = g2 + a * c2 + b * (c0 * y - c1 * x);
    }
  }

  /**
   * out = Gᵀ y (overwritten: every dof); `values` may hold G's values at another
   * configuration (same pattern), as a projection's factorization keeps them. Gathered
   * body by body (colDof …): each of a body's 3 or 6 sums runs over its entries in row
   * order from +0, skipping rows with y_r = 0, in a local, stored once — the sums a row
   * by row scatter into out makes, in the same order (the same bits), without re-reading
   * out after every store (on the 100-link chain 6.3–7.5 → 4.3–4.7 µs a product).
   */
  multiplyTranspose(y: Float64Array, out: Float64Array, values = this.G.values): void {
    const { colDof, colWidth, colStart, colRow, colSlot } = this;
    const v = values;
    for (let k = 0; k < colDof.length; k++) {
      const six = colWidth[k] === 6;
      let o0 = 0;
      let o1 = 0;
      let o2 = 0;
      let o3 = 0;
      let o4 = 0;
      let o5 = 0;
      for (let p = colStart[k]; p < colStart[k + 1]; p++) {
        const yr = y[colRow[p]];
        if (yr === 0) continue;
        const s = colSlot[p];
        o0 += v[s] * yr;
        o1 += v[s + 1] * yr;
        o2 += v[s + 2] * yr;
        if (six) {
          o3 += v[s + 3] * yr;
          o4 += v[s + 4] * yr;
          o5 += v[s + 5] * yr;
        }
      }
      const d = colDof[k];
      out[d] = o0;
      out[d + 1] = o1;
      out[d + 2] = o2;
      if (six) {
        out[d + 3] = o3;
        out[d + 4] = o4;
        out[d + 5] = o5;
      }
    }
  }

  /** `joint "<id>" row k` (or `motor "<id>" row 0`) for global row r. */
  /**
   * The row whose |C(q, t)| is largest at the current configuration and that value (m or
   * rad; row −1 and 0 without rows): what a failure names. Allocates (a failure's path).
   */
  largestResidual(t: number): { row: number; value: number } {
    const c = new Float64Array(this.numRows);
    this.residual(t, c);
    let row = -1;
    let value = 0;
    for (let r = 0; r < c.length; r++)
      if (Math.abs(c[r]) > value) {
        row = r;
        value = Math.abs(c[r]);
      }
    return { row, value };
  }

  rowLabel(r: number): string {
    const k = this.rowConstraint[r];
    const c = this.constraints[k];
    return `${c.category} "${c.id}" row ${r - this.rowOffset[k]}`;
  }

  /**
   * Force and torque constraint k applies on its body b (world; torque about the
   * attachment point on b) for the multipliers scale·lambda (global vector).
   */
  reaction(
    k: number,
    lambda: Float64Array,
    force: Float64Array,
    torque: Float64Array,
    scale = 1,
  ): void {
    this.constraints[k].reaction(lambda, this.rowOffset[k], force, torque);
    if (scale !== 1)
      for (let i = 0; i < 3; i++) {
        force[i] *= scale;
        torque[i] *= scale;
      }
  }
}
