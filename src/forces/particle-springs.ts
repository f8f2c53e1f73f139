/**
 * Many axial springs whose ends are particles, fixed bodies or ground, in one effector
 * with structure-of-arrays storage (as MuJoCo keeps its tendons): one loop evaluates every
 * spring with the shared law of axial.ts and caches forces and 3×3 Jacobian blocks under
 * the system's stateVersion, so applyForces, addPosJacobian and addVelJacobian at one
 * state cost one evaluation. Solve-matrix offsets are cached per structureVersion.
 *
 * Particles have no rotation: an end's world point is x_body + p. A fixed body's point is
 * constant (its world position at construction). With A = ∂f_b/∂d and B = ∂f_b/∂ḋ of
 * axial.ts and d = x_b − x_a, the blocks are ∂f_b/∂x_b = A, ∂f_b/∂x_a = −A,
 * ∂f_a/∂x_b = −A, ∂f_a/∂x_a = A (B likewise for velocities).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { quatRotate } from "../math/quat";
import { BodyKind, type BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import { AXIAL_LENGTH, axialSpring } from "./axial";
import type { ForceEffector } from "./effector";

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

export class ParticleSpringSet implements ForceEffector {
  readonly count: number;
  /** Dynamic body of each end (−1 when the end does not move). */
  private readonly a: Int32Array;
  private readonly b: Int32Array;
  /** Local offset of a moving end, or the world point of a still one (3 per spring). */
  private readonly pa: Float64Array;
  private readonly pb: Float64Array;
  private readonly k: Float64Array;
  private readonly c: Float64Array;
  private readonly l0: Float64Array;
  // cache at `cachedVersion`
  private readonly f: Float64Array;
  private readonly jac: Float64Array;
  private readonly scalars: Float64Array;
  private readonly d = new Float64Array(3);
  private readonly dd = new Float64Array(3);
  private cachedVersion = -1;
  // solve-matrix offsets (aa, ab, ba, bb) at `offsetsVersion`
  private readonly offsets: Int32Array;
  private offsetsVersion = -1;
  private readonly anyDamped: boolean;
  private readonly anyAxial: boolean;

  constructor(
    private readonly sys: BodySystem,
    readonly id: string,
    springs: readonly ParticleSpring[],
  ) {
    const n = springs.length;
    this.count = n;
    this.a = new Int32Array(n);
    this.b = new Int32Array(n);
    this.pa = new Float64Array(3 * n);
    this.pb = new Float64Array(3 * n);
    this.k = new Float64Array(n);
    this.c = new Float64Array(n);
    this.l0 = new Float64Array(n);
    this.f = new Float64Array(3 * n);
    this.jac = new Float64Array(18 * n);
    this.scalars = new Float64Array(3 * n);
    this.offsets = new Int32Array(4 * n);
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
      this.k[i] = s.stiffness;
      this.c[i] = s.damping;
    });
    for (let i = 0; i < n; i++) {
      this.endSeparation(i);
      const l = Math.hypot(this.d[0], this.d[1], this.d[2]);
      this.l0[i] = springs[i].restLength ?? l;
    }
    this.anyAxial = this.l0.some((l) => l > 0);
    this.anyDamped = springs.some((s, i) => s.damping > 0 && this.l0[i] > 0);
  }

  /**
   * As SpringEffector: SPD when every spring is zero-length or undamped in tension;
   * SYMMETRIC when an undamped one is compressed; GENERAL with damped axial springs
   * (the term (c/l) û (P ḋ)ᵀ is nonsymmetric).
   */
  get jacobianType(): MatrixTypeFlags {
    if (this.anyDamped) return MatrixType.GENERAL;
    if (!this.anyAxial) return MatrixType.SPD;
    this.evaluate();
    for (let i = 0; i < this.count; i++)
      if (this.l0[i] > 0 && this.scalars[3 * i + AXIAL_LENGTH] < this.l0[i])
        return MatrixType.SYMMETRIC;
    return MatrixType.SPD;
  }

  applyForces(_t: number): void {
    this.evaluate();
    const { a, b, f } = this;
    const F = this.sys.force;
    for (let i = 0; i < this.count; i++) {
      const ia = a[i];
      const ib = b[i];
      if (ib >= 0) {
        F[3 * ib] += f[3 * i];
        F[3 * ib + 1] += f[3 * i + 1];
        F[3 * ib + 2] += f[3 * i + 2];
      }
      if (ia >= 0) {
        F[3 * ia] -= f[3 * i];
        F[3 * ia + 1] -= f[3 * i + 1];
        F[3 * ia + 2] -= f[3 * i + 2];
      }
    }
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

  potentialEnergy(): number {
    this.evaluate();
    let e = 0;
    for (let i = 0; i < this.count; i++) {
      const x = this.scalars[3 * i + AXIAL_LENGTH] - this.l0[i];
      e += 0.5 * this.k[i] * x * x;
    }
    return e;
  }

  /** Adds s·(A or B) blocks (which = 0: A, 9: B) with the sign pattern of the header. */
  private addBlocks(m: SparseBlockMatrix, s: number, which: number): void {
    this.evaluate();
    this.refreshOffsets(m);
    const { a, b, jac, offsets } = this;
    const v = m.values;
    for (let i = 0; i < this.count; i++) {
      const j0 = 18 * i + which;
      const oaa = offsets[4 * i];
      const oab = offsets[4 * i + 1];
      const oba = offsets[4 * i + 2];
      const obb = offsets[4 * i + 3];
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

  private refreshOffsets(m: SparseBlockMatrix): void {
    if (this.offsetsVersion === m.structureVersion) return;
    const blk = this.sys.block;
    for (let i = 0; i < this.count; i++) {
      const ka = this.a[i] >= 0 ? blk[this.a[i]] : -1;
      const kb = this.b[i] >= 0 ? blk[this.b[i]] : -1;
      this.offsets[4 * i] = ka >= 0 ? m.offsetOf(ka, ka) : -1;
      this.offsets[4 * i + 1] = ka >= 0 && kb >= 0 ? m.offsetOf(ka, kb) : -1;
      this.offsets[4 * i + 2] = ka >= 0 && kb >= 0 ? m.offsetOf(kb, ka) : -1;
      this.offsets[4 * i + 3] = kb >= 0 ? m.offsetOf(kb, kb) : -1;
    }
    this.offsetsVersion = m.structureVersion;
  }

  /** d = x_b − x_a and ḋ into this.d, this.dd for spring i. */
  private endSeparation(i: number): void {
    const { sys, d, dd } = this;
    const ia = this.a[i];
    const ib = this.b[i];
    for (let j = 0; j < 3; j++) {
      const xa = ia >= 0 ? sys.pos[3 * ia + j] + this.pa[3 * i + j] : this.pa[3 * i + j];
      const xb = ib >= 0 ? sys.pos[3 * ib + j] + this.pb[3 * i + j] : this.pb[3 * i + j];
      d[j] = xb - xa;
      dd[j] = (ib >= 0 ? sys.vel[3 * ib + j] : 0) - (ia >= 0 ? sys.vel[3 * ia + j] : 0);
    }
  }

  private evaluate(): void {
    if (this.cachedVersion === this.sys.stateVersion) return;
    for (let i = 0; i < this.count; i++) {
      this.endSeparation(i);
      axialSpring(
        this.d,
        0,
        this.dd,
        0,
        this.k[i],
        this.c[i],
        this.l0[i],
        this.f,
        3 * i,
        this.scalars,
        3 * i,
        this.jac,
        18 * i,
      );
    }
    this.cachedVersion = this.sys.stateVersion;
  }
}
