/**
 * Many axial springs whose ends are particles, fixed bodies or ground, in one effector
 * with structure-of-arrays storage (as MuJoCo keeps its tendons): one loop evaluates every
 * spring with the shared law of axial.ts and caches forces and the Jacobians' factors
 * under the system's stateVersion, so applyForces, addPosJacobian and addVelJacobian at
 * one state cost one evaluation (the 3×3 blocks are expanded from the factors only when a
 * matrix is assembled). Solve-matrix offsets are cached per structureVersion.
 *
 * Particles have no rotation: an end's world point is x_body + p. A fixed body's point is
 * constant (its world position at construction). With A = ∂f_b/∂d and B = ∂f_b/∂ḋ of
 * axial.ts and d = x_b − x_a, the blocks are ∂f_b/∂x_b = A, ∂f_b/∂x_a = −A,
 * ∂f_a/∂x_b = −A, ∂f_a/∂x_a = A (B likewise for velocities).
 *
 * `symmetricJacobian` switches A to its symmetric approximation (axial.ts, as SOFA's
 * StiffSpringForceField), for symmetric solvers. The matrix-free product
 * (JacobianProductEffector) applies C = s_x A + s_v B = û gᵀ + p I (axial.ts), kept per
 * spring as [û, g, p]. Once (s_x, s_v) are announced the law writes C as it evaluates the
 * forces (one pass over the springs per Newton iteration instead of two; bench/README.md,
 * "Cloth"), into a buffer of its own; setJacobianProduct pins it (a copy into the
 * product's buffer), so the operator stays the one of setJacobianProduct even if the
 * springs are evaluated at another state meanwhile. A product, spring by spring
 * (spring-product-kernel.ts):
 *   y = C (x_b − x_a),  out_b += y,  out_a −= y,
 * O(springs) per product with no assembly; the blocks of J are C at (b, b) and (a, a) and
 * −C at (a, b) and (b, a) (the multigrid preconditioner assembles them all).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { quatRotate } from "../math/quat";
import { BodyKind, type BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import {
  AXIAL_COMBINATION,
  AXIAL_FACTORS,
  AXIAL_LENGTH,
  AXIAL_RATE,
  AXIAL_TENSION,
  AxialEnds,
  AxialProduct,
  addAxialDampingForces,
  axialBlocks,
  axialForces,
} from "./axial";
import type { JacobianProductEffector, SymmetrizableEffector } from "./effector";
import { springProductKernel } from "./spring-product-kernel";

// Module-level copies of imports used once per spring: loaded as CommonJS (a script outside
// the package, run with tsx) every use of an imported binding is a getter call, here once
// per spring and pass; as the package's ES modules nothing (bench/README.md, "Imported
// bindings in hot loops").
/** Jacobian factors per spring (axial.ts layout). */
const STRIDE = AXIAL_FACTORS;
/** Rank-one form [û, g, p] of C = s_x A + s_v B per spring. */
const CSTRIDE = AXIAL_COMBINATION;

export interface ParticleSpring {
  /** Body index of each end (−1 ground), and the point in its frame (m). */
  bodyA: number;
  pointA: ArrayLike<number>;
  bodyB: number;
  pointB: ArrayLike<number>;
  stiffness: number;
  damping: number;
  /** Default: the current distance. */
  restLength?: number;
}

/** True when a spring end can join a ParticleSpringSet (no rotational dofs). */
export function isTranslationalEnd(sys: BodySystem, body: number): boolean {
  return body < 0 || sys.kind[body] !== BodyKind.RIGID;
}

/**
 * Where each spring's four blocks lie in one block matrix: offsets[4i ..] of (a, a), (b, b),
 * (a, b) and (b, a), −1 where an end is fixed, valid for `matrix` at `version`.
 */
class SpringBlockOffsets {
  matrix: SparseBlockMatrix | null = null;
  version = -1;
  /** ParticleSpringSet.offsetUses at the last use (productOffsets). */
  used = 0;
  readonly offsets: Int32Array;
  constructor(springs: number) {
    this.offsets = new Int32Array(4 * springs);
  }

  /** The offsets in m, located again when m or its pattern changed since the last call. */
  locate(m: SparseBlockMatrix, block: Int32Array, a: Int32Array, b: Int32Array): Int32Array {
    const off = this.offsets;
    if (this.matrix === m && this.version === m.structureVersion) return off;
    for (let i = 0; i < a.length; i++) {
      const ka = a[i] >= 0 ? block[a[i]] : -1;
      const kb = b[i] >= 0 ? block[b[i]] : -1;
      off[4 * i] = ka >= 0 ? m.offsetOf(ka, ka) : -1;
      off[4 * i + 1] = kb >= 0 ? m.offsetOf(kb, kb) : -1;
      off[4 * i + 2] = ka >= 0 && kb >= 0 ? m.offsetOf(ka, kb) : -1;
      off[4 * i + 3] = ka >= 0 && kb >= 0 ? m.offsetOf(kb, ka) : -1;
    }
    this.matrix = m;
    this.version = m.structureVersion;
    return off;
  }
}

export class ParticleSpringSet implements SymmetrizableEffector, JacobianProductEffector {
  readonly count: number;
  /** The dashpots' forces −c l̇ û are linear in the velocities at given positions (axial.ts). */
  readonly affineInVelocity = true;
  /** Dynamic body of each end (−1 when the end does not move). */
  private readonly a: Int32Array;
  private readonly b: Int32Array;
  /** First dof of each end (−1 when the end does not move). */
  private readonly dofA: Int32Array;
  private readonly dofB: Int32Array;
  /**
   * The springs in runs of consecutive indices runStart[r] … runStart[r + 1] − 1 whose
   * ends all move (runMoving[r] = 1) or not (0), for addJacobianProduct.
   */
  private readonly runStart: Int32Array;
  private readonly runMoving: Uint8Array;
  /** Local offset of a moving end, or the world point of a still one (3 per spring). */
  private readonly pa: Float64Array;
  private readonly pb: Float64Array;
  private readonly k: Float64Array;
  private readonly c: Float64Array;
  private readonly l0: Float64Array;
  // cache at `cachedVersion`
  private readonly factors: Float64Array;
  private readonly scalars: Float64Array;
  /** A and B blocks (18 per spring), expanded from the factors at `jacVersion`. */
  private readonly jac: Float64Array;
  private jacVersion = -1;
  /** The law's view of the ends: particle positions and velocities at 3·body. */
  private readonly ends: AxialEnds;
  private cachedVersion = -1;
  /** stateVersion of `factors` (−1 when the last evaluation left them out). */
  private factorsVersion = -1;
  /** The springs' blocks in the solve matrix (addPosJacobian, addVelJacobian). */
  private readonly solveOffsets: SpringBlockOffsets;
  private readonly anyDamped: boolean;
  private readonly anyAxial: boolean;
  private symmetric = false;
  /** C = s_x A + s_v B = û gᵀ + p I per spring as [û, g, p], set by setJacobianProduct. */
  private readonly product: Float64Array;
  /** addJacobianProduct over `product` (spring-product-kernel.ts: why a closure). */
  private readonly productKernel: (x: Float64Array, out: Float64Array) => void;
  /** The announced coefficients and the buffer the law fills for them (see announce…). */
  private readonly next: AxialProduct;
  private announced = false;
  /** stateVersion at which `next.out` was filled for `next.sx`, `next.sv` (−1: not). */
  private nextVersion = -1;
  /**
   * Offsets of the (a, a), (b, b), (a, b) and (b, a) blocks (−1: not reserved) in the last
   * two matrices given to setJacobianProduct (the operator alternates between its block
   * diagonal and the assembled W: iteration-operator.ts), the older one replaced first.
   */
  private readonly productOffsets: [SpringBlockOffsets, SpringBlockOffsets];
  /** Uses of productOffsets so far (their `used` stamps). */
  private offsetUses = 0;

  constructor(
    private readonly sys: BodySystem,
    readonly id: string,
    springs: readonly ParticleSpring[],
  ) {
    const n = springs.length;
    this.count = n;
    this.a = new Int32Array(n);
    this.b = new Int32Array(n);
    this.dofA = new Int32Array(n);
    this.dofB = new Int32Array(n);
    this.pa = new Float64Array(3 * n);
    this.pb = new Float64Array(3 * n);
    this.k = new Float64Array(n);
    this.c = new Float64Array(n);
    this.l0 = new Float64Array(n);
    this.jac = new Float64Array(18 * n);
    this.factors = new Float64Array(STRIDE * n);
    this.scalars = new Float64Array(3 * n);
    this.solveOffsets = new SpringBlockOffsets(n);
    this.product = new Float64Array(CSTRIDE * n);
    this.next = new AxialProduct(new Float64Array(CSTRIDE * n));
    this.productOffsets = [new SpringBlockOffsets(n), new SpringBlockOffsets(n)];
    const world = new Float64Array(3);
    const end = (body: number, p: ArrayLike<number>, out: Float64Array, i: number): number => {
      if (body >= 0 && !isTranslationalEnd(sys, body))
        throw new Error(`ParticleSpringSet: body ${sys.ids[body]} is a dynamic rigid body`);
      const moving = body >= 0 && sys.dofOffset[body] >= 0;
      if (moving) for (let j = 0; j < 3; j++) out[3 * i + j] = p[j] ?? 0;
      else if (body < 0) for (let j = 0; j < 3; j++) out[3 * i + j] = p[j] ?? 0;
      else {
        const local = [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];
        if (sys.hasOrientation[body]) quatRotate(world, 0, sys.quat, 4 * body, local, 0);
        else world.set(local);
        for (let j = 0; j < 3; j++) out[3 * i + j] = sys.pos[3 * body + j] + world[j];
      }
      return moving ? body : -1;
    };
    springs.forEach((s, i) => {
      this.a[i] = end(s.bodyA, s.pointA, this.pa, i);
      this.b[i] = end(s.bodyB, s.pointB, this.pb, i);
      this.dofA[i] = this.a[i] >= 0 ? sys.dofOffset[this.a[i]] : -1;
      this.dofB[i] = this.b[i] >= 0 ? sys.dofOffset[this.b[i]] : -1;
      this.k[i] = s.stiffness;
      this.c[i] = s.damping;
    });
    const starts: number[] = [];
    const moving: number[] = [];
    for (let i = 0; i < n; i++) {
      const both = this.dofA[i] >= 0 && this.dofB[i] >= 0 ? 1 : 0;
      if (i === 0 || both !== moving[moving.length - 1]) {
        starts.push(i);
        moving.push(both);
      }
    }
    starts.push(n);
    this.runStart = Int32Array.from(starts);
    this.runMoving = Uint8Array.from(moving);
    this.productKernel = springProductKernel(
      this.dofA,
      this.dofB,
      this.runStart,
      this.runMoving,
      this.product,
    );
    this.ends = new AxialEnds(
      sys.pos,
      sys.vel,
      this.a.map((body) => (body >= 0 ? 3 * body : -1)),
      this.b.map((body) => (body >= 0 ? 3 * body : -1)),
      this.pa,
      this.pb,
    );
    // the current lengths (written for any l0), for the springs without a rest length
    this.evaluate(null, false);
    for (let i = 0; i < n; i++)
      this.l0[i] = springs[i].restLength ?? this.scalars[3 * i + AXIAL_LENGTH];
    this.cachedVersion = -1;
    this.factorsVersion = -1;
    this.anyAxial = this.l0.some((l) => l > 0);
    this.anyDamped = springs.some((s, i) => s.damping > 0 && this.l0[i] > 0);
  }

  /**
   * As SpringEffector: SPD when every spring is zero-length or in tension (s ≥ 0, −A is
   * then k ûûᵀ + (s/l) P ⪰ 0); SYMMETRIC when one is compressed; GENERAL with damped
   * axial springs (the term (c/l) û (P ḋ)ᵀ is nonsymmetric). With symmetricJacobian
   * always SPD (axial.ts: −A⁺ ⪰ 0).
   */
  get jacobianType(): MatrixTypeFlags {
    if (this.symmetric || !this.anyAxial) return MatrixType.SPD;
    if (this.anyDamped) return MatrixType.GENERAL;
    this.evaluate(null, false);
    for (let i = 0; i < this.count; i++)
      if (this.l0[i] > 0 && this.scalars[3 * i + AXIAL_TENSION] < 0) return MatrixType.SYMMETRIC;
    return MatrixType.SPD;
  }

  get symmetricJacobian(): boolean {
    return this.symmetric;
  }

  set symmetricJacobian(on: boolean) {
    if (on === this.symmetric) return;
    this.symmetric = on;
    this.cachedVersion = -1;
    this.factorsVersion = -1;
    this.jacVersion = -1;
    this.nextVersion = -1;
  }

  /**
   * Adds to stiff[2b] and damp[2b] the Gershgorin row sums of particle b's 3 × 3 block row
   * of M^{-1/2} K M^{-1/2} and M^{-1/2} D M^{-1/2} at the current state
   * (ForceEffector.addExplicitRows; symplectic Euler's stability), as resolution.ts's
   * springNetworkFrequencyBound but with each spring's block at the current state: −A =
   * k ûûᵀ + (s/l) P + (c/l) û wᵀ has norm at most max(k, |s|/l) + c |w|/l (s the tension,
   * w = P ḋ; a zero-length spring's −A = k I), and −B = c ûûᵀ (c I) norm c. Row i (a
   * moving particle of mass m_i) sums ‖A‖ (1/m_i + 1/√(m_i m_j)) over its springs (the
   * second term where the other end moves too); the largest row bounds ω², exactly k/m for
   * one particle on one spring to a fixed point.
   */
  addExplicitRows(stiffRows: Float64Array, dampRows: Float64Array): void {
    this.evaluate(null, false);
    const { sys, a, b, k, c, l0, scalars } = this;
    const { mass, vel } = sys;
    for (let i = 0; i < this.count; i++) {
      const ia = a[i];
      const ib = b[i];
      let stiff = k[i];
      const l = scalars[3 * i + AXIAL_LENGTH];
      if (l0[i] > 0 && l > 1e-12 * l0[i]) {
        // |w|² = |ḋ|² − l̇² (particles: ḋ = v_b − v_a)
        let dd = 0;
        for (let j = 0; j < 3; j++) {
          const r = (ib >= 0 ? vel[3 * ib + j] : 0) - (ia >= 0 ? vel[3 * ia + j] : 0);
          dd += r * r;
        }
        const rate = scalars[3 * i + AXIAL_RATE];
        const w = Math.sqrt(Math.max(dd - rate * rate, 0));
        stiff = Math.max(stiff, Math.abs(scalars[3 * i + AXIAL_TENSION]) / l) + (c[i] * w) / l;
      }
      const across = ia >= 0 && ib >= 0 ? 1 / Math.sqrt(mass[ia] * mass[ib]) : 0;
      if (ia >= 0) {
        stiffRows[2 * ia] += stiff * (1 / mass[ia] + across);
        dampRows[2 * ia] += c[i] * (1 / mass[ia] + across);
      }
      if (ib >= 0) {
        stiffRows[2 * ib] += stiff * (1 / mass[ib] + across);
        dampRows[2 * ib] += c[i] * (1 / mass[ib] + across);
      }
    }
  }

  applyForces(_t: number): void {
    // the law adds the forces as it evaluates them (re-evaluated if cached: rare, and
    // one loop instead of a second scatter)
    this.evaluate(this.sys.force, false);
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    const blk = this.sys.block;
    for (let i = 0; i < this.count; i++)
      if (this.a[i] >= 0 && this.b[i] >= 0) {
        m.addBlock(blk[this.a[i]], blk[this.b[i]]);
        m.addBlock(blk[this.b[i]], blk[this.a[i]]);
      }
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    this.addBlocks(m, s, 0);
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    this.addBlocks(m, s, 9);
  }

  /**
   * The coefficients of the coming setJacobianProduct calls: from now on the law also
   * computes C = sx A + sv B whenever it evaluates the springs (into `next`), so the
   * product form costs no pass of its own.
   */
  announceJacobianProduct(sx: number, sv: number): void {
    const next = this.next;
    if (this.announced && next.sx === sx && next.sv === sv) return;
    next.sx = sx;
    next.sv = sv;
    this.announced = true;
    this.nextVersion = -1;
  }

  /**
   * Pins C = sx A + sv B at the current state: the one the law computed with the forces
   * when (sx, sv) were announced before the residual (as the stepper does), else the law
   * is evaluated again for them, copied into the product's buffer (which the product's
   * kernel holds: spring-product-kernel.ts). The pinned C stays while the springs are
   * evaluated elsewhere (the law writes its own buffer). Adds J's blocks to those of `matrix`
   * that are reserved: the diagonal ones always, the off-diagonal ones when it holds them.
   */
  setJacobianProduct(sx: number, sv: number, matrix: SparseBlockMatrix | null): void {
    this.announceJacobianProduct(sx, sv);
    if (this.nextVersion !== this.sys.stateVersion) {
      this.cachedVersion = -1;
      this.evaluate(null, false);
    }
    this.product.set(this.next.out);
    this.nextVersion = -1;
    const m = matrix;
    if (m === null) return;
    const C = this.product;
    const off = this.offsetsIn(m);
    const v = m.values;
    for (let i = 0; i < this.count; i++) {
      const p = CSTRIDE * i;
      const u0 = C[p];
      const u1 = C[p + 1];
      const u2 = C[p + 2];
      const g0 = C[p + 3];
      const g1 = C[p + 4];
      const g2 = C[p + 5];
      const q = C[p + 6];
      const c00 = u0 * g0 + q;
      const c01 = u0 * g1;
      const c02 = u0 * g2;
      const c10 = u1 * g0;
      const c11 = u1 * g1 + q;
      const c12 = u1 * g2;
      const c20 = u2 * g0;
      const c21 = u2 * g1;
      const c22 = u2 * g2 + q;
      // +C on the diagonal blocks (a, a) and (b, b), −C on (a, b) and (b, a), the four
      // written out (a loop over them with a sign factor: the benchmark's stiff cloth's
      // assembled W 101 µs against 89, its block diagonal 60 against 55)
      const q4 = 4 * i;
      let b = off[q4];
      if (b >= 0) {
        v[b] += c00;
        v[b + 1] += c01;
        v[b + 2] += c02;
        v[b + 3] += c10;
        v[b + 4] += c11;
        v[b + 5] += c12;
        v[b + 6] += c20;
        v[b + 7] += c21;
        v[b + 8] += c22;
      }
      b = off[q4 + 1];
      if (b >= 0) {
        v[b] += c00;
        v[b + 1] += c01;
        v[b + 2] += c02;
        v[b + 3] += c10;
        v[b + 4] += c11;
        v[b + 5] += c12;
        v[b + 6] += c20;
        v[b + 7] += c21;
        v[b + 8] += c22;
      }
      b = off[q4 + 2];
      if (b >= 0) {
        v[b] -= c00;
        v[b + 1] -= c01;
        v[b + 2] -= c02;
        v[b + 3] -= c10;
        v[b + 4] -= c11;
        v[b + 5] -= c12;
        v[b + 6] -= c20;
        v[b + 7] -= c21;
        v[b + 8] -= c22;
      }
      b = off[q4 + 3];
      if (b >= 0) {
        v[b] -= c00;
        v[b + 1] -= c01;
        v[b + 2] -= c02;
        v[b + 3] -= c10;
        v[b + 4] -= c11;
        v[b + 5] -= c12;
        v[b + 6] -= c20;
        v[b + 7] -= c21;
        v[b + 8] -= c22;
      }
    }
  }

  /** The block offsets of the springs in m (productOffsets: the one holding m, else the older). */
  private offsetsIn(m: SparseBlockMatrix): Int32Array {
    const [first, second] = this.productOffsets;
    const c =
      second.matrix === m || (first.matrix !== m && first.used > second.used) ? second : first;
    c.used = ++this.offsetUses;
    return c.locate(m, this.sys.block, this.a, this.b);
  }

  addJacobianProduct(x: Float64Array, out: Float64Array): void {
    // run by run in spring order, the runs of springs with two moving ends without the end
    // tests: 48 → 38 µs a product on the 3 875 springs of the benchmark's cloth
    this.productKernel(x, out);
  }

  potentialEnergy(): number {
    this.evaluate(null, false);
    let e = 0;
    for (let i = 0; i < this.count; i++) {
      const x = this.scalars[3 * i + AXIAL_LENGTH] - this.l0[i];
      e += 0.5 * this.k[i] * x * x;
    }
    return e;
  }

  /** The springs' damping forces (axial.ts addAxialDampingForces; power Σ c l̇²). */
  applyDissipativeForces(_t: number): void {
    addAxialDampingForces(this.count, this.ends, this.c, this.l0, this.sys.force);
  }

  /** Adds s·(A or B) blocks (which = 0: A, 9: B) with the sign pattern of the header. */
  private addBlocks(m: SparseBlockMatrix, s: number, which: number): void {
    this.evaluate(null, true);
    if (this.jacVersion !== this.factorsVersion) {
      for (let i = 0; i < this.count; i++) axialBlocks(this.factors, STRIDE * i, this.jac, 18 * i);
      this.jacVersion = this.factorsVersion;
    }
    const { a, b, jac } = this;
    const offsets = this.solveOffsets.locate(m, this.sys.block, a, b);
    const v = m.values;
    for (let i = 0; i < this.count; i++) {
      const j0 = 18 * i + which;
      const oaa = offsets[4 * i];
      const obb = offsets[4 * i + 1];
      const oab = offsets[4 * i + 2];
      const oba = offsets[4 * i + 3];
      const hasA = a[i] >= 0;
      const hasB = b[i] >= 0;
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++) {
          // particle blocks are 3×3 (row stride 3)
          const x = s * jac[j0 + 3 * r + c];
          const e = 3 * r + c;
          if (hasB) v[obb + e] += x;
          if (hasA) v[oaa + e] += x;
          if (hasA && hasB) {
            v[oab + e] -= x;
            v[oba + e] -= x;
          }
        }
    }
  }

  /**
   * Evaluates the law at the current state unless cached: the scalars, and the factors
   * when `withFactors` or when no product is announced; with `force`, always, adding the
   * forces to it (the set keeps no per-spring forces). With an announced product the law
   * fills its buffer too (announceJacobianProduct).
   */
  private evaluate(force: Float64Array | null, withFactors: boolean): void {
    const version = this.sys.stateVersion;
    const cached =
      this.cachedVersion === version && (!withFactors || this.factorsVersion === version);
    if (force === null && cached) return;
    const { ends, k, c, l0, scalars, symmetric } = this;
    const product = this.announced ? this.next : null;
    const factors = withFactors || product === null ? this.factors : null;
    axialForces(this.count, ends, k, c, l0, null, scalars, factors, symmetric, force, product);
    this.cachedVersion = version;
    this.factorsVersion = factors === null ? -1 : version;
    if (product !== null) this.nextVersion = version;
  }
}
