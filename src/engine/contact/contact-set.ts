/**
 * A set of contacts as one nonsmooth problem sees them: structure-of-arrays storage,
 * local frames, the contact Jacobian H and the Delassus operator W_c = s·H Y Hᵀ for a
 * block-diagonal Y (one w×w block per dynamic body, w = 3 or 6).
 *
 * Contact i joins body a = bodyA[i] and body b = bodyB[i] (−1 or a fixed body: no dofs).
 * Its local frame is (n, t1, t2), rows of frame[9i..9i+8]: n from a to b (the collision
 * layer's normal), t1 = normalize(n × e) with e the world axis least aligned with n, and
 * t2 = n × t1, so (n, t1, t2) is right-handed and depends on n only (continuous while n
 * varies slowly, which keeps warm-started tangential impulses meaningful).
 * The local relative velocity of contact i is u_i = Fᵀ(v_pb − v_pa) with F = [n t1 t2]
 * and v_p = v + ω × r the world velocity of a body's material point at the contact
 * (r from the body's centre of mass to its surface point, world frame). So
 *   u_i = Σ_X A_iX u_X,    A_iX = s_X Fᵀ [I₃, −[r_X]×]  (3 × w; s_b = +1, s_a = −1),
 * for a particle A_iX = s_X Fᵀ (no rotation). Row k of A_iX is s_X [e_k, r_X × e_k]: the
 * generalized force of a unit impulse along e_k on body b at its contact point is
 * [e_k; r_b × e_k] (force and torque about the centre of mass), and −that on body a —
 * the impulse P_i = (P_n, P_t1, P_t2) acts on b as F P_i and on a as −F P_i.
 *
 * Triangle sides (fem face contact, fem-faces.ts; side b a vertex particle or a rigid
 * body's point, its rows as any side b's): side a of contact i may be the point
 * Σ_k w_k x_k of three particles (triangle[i] = 1; nodes[3i+k], weights[3i+k]). Its
 * particles' blocks are then A_ia,k = w_k · (−Fᵀ): the rows stored for side a times w_k,
 * so the local velocity has −w_k Fᵀ v_k from each (the derivative of the gap
 * n·(p_b − Σ w_k x_k), the weights held for the step). bodyA[i] is the first node (the
 * contact's name and pair parameters). Such a set has no factored form (the three
 * particles' dofs are not one block): the nonsmooth contact takes the dense path for it.
 *
 * The Delassus blocks are W_ij = s Σ_X A_iX Y_X A_jXᵀ over the dynamic bodies X shared by
 * contacts i and j; W is not assembled: the solvers get it factored (A and Y Aᵀ per contact
 * side, a FactoredDelassus), so products cost O(contacts) and the velocity-form PGS sweeps
 * contact by contact. Nothing is allocated per step once the buffers have grown to the
 * largest contact count seen.
 */
import { extend } from "../math/grow";
import { BodyKind, type BodySystem } from "../model/body-system";
import { FactoredDelassus } from "../solvers/nonsmooth/factored";
import type { ContactDim } from "../solvers/nonsmooth/types";

/** (t1, t2) for the unit normal n = frame[o..o+2], written to frame[o+3..o+8]. */
export function tangentFrame(frame: Float64Array, o: number): void {
  const nx = frame[o];
  const ny = frame[o + 1];
  const nz = frame[o + 2];
  const ax = Math.abs(nx);
  const ay = Math.abs(ny);
  const az = Math.abs(nz);
  // t1 = n × e, e the least aligned world axis.
  let tx: number;
  let ty: number;
  let tz: number;
  if (ax <= ay && ax <= az) {
    tx = 0;
    ty = nz;
    tz = -ny;
  } else if (ay <= az) {
    tx = -nz;
    ty = 0;
    tz = nx;
  } else {
    tx = ny;
    ty = -nx;
    tz = 0;
  }
  const l = 1 / Math.sqrt(tx * tx + ty * ty + tz * tz);
  tx *= l;
  ty *= l;
  tz *= l;
  frame[o + 3] = tx;
  frame[o + 4] = ty;
  frame[o + 5] = tz;
  frame[o + 6] = ny * tz - nz * ty;
  frame[o + 7] = nz * tx - nx * tz;
  frame[o + 8] = nx * ty - ny * tx;
}

export class ContactSet {
  count = 0;
  capacity = 0;
  bodyA: Int32Array = new Int32Array(0);
  bodyB: Int32Array = new Int32Array(0);
  key: Float64Array = new Float64Array(0);
  /** Rows n, t1, t2 (9 per contact). */
  frame: Float64Array = new Float64Array(0);
  /** Midpoint between the surfaces (3 per contact). */
  point: Float64Array = new Float64Array(0);
  gap: Float64Array = new Float64Array(0);
  /** Lever arms r_a, r_b from each centre of mass to its surface point (3 each). */
  rA: Float64Array = new Float64Array(0);
  rB: Float64Array = new Float64Array(0);
  /** A_ia (sign −1) then A_ib (sign +1): 18 numbers each (3 rows × 6), 36 per contact. */
  jac: Float64Array = new Float64Array(0);
  /** Y_X A_iXᵀ: per contact and side, 3 columns of 6 (column k at [k·6..k·6+5]). */
  yjac: Float64Array = new Float64Array(0);
  restitution: Float64Array = new Float64Array(0);
  friction: Float64Array = new Float64Array(0);
  /** 1 when side a of the contact is a triangle of particles (file comment). */
  triangle: Uint8Array = new Uint8Array(0);
  /** A triangle side's node bodies and barycentric weights (3 each per contact). */
  nodes: Int32Array = new Int32Array(0);
  weights: Float64Array = new Float64Array(0);

  /** Dofs per body (6 rigid, 3 particle, 0 fixed), refreshed by reset(). */
  private readonly bodyWidth: Int32Array;
  /** The factored Delassus operator of the set (rebound by delassus()). */
  private readonly op = new FactoredDelassus();
  /** rowVelocity's scratch. */
  private readonly row = new Float64Array(1);

  constructor(readonly sys: BodySystem) {
    this.bodyWidth = new Int32Array(sys.numBodies);
  }

  /**
   * Empties the set and makes room for n contacts; re-reads the bodies' kinds (a body may
   * have been fixed or freed since the last step).
   */
  reset(n: number): void {
    this.count = 0;
    const kind = this.sys.kind;
    const rigid = BodyKind.RIGID;
    const particle = BodyKind.PARTICLE;
    for (let b = 0; b < kind.length; b++)
      this.bodyWidth[b] = kind[b] === rigid ? 6 : kind[b] === particle ? 3 : 0;
    if (n <= this.capacity) return;
    const c = Math.max(n, 2 * this.capacity, 16);
    this.bodyA = extend(this.bodyA, c);
    this.bodyB = extend(this.bodyB, c);
    this.key = extend(this.key, c);
    this.frame = extend(this.frame, 9 * c);
    this.point = extend(this.point, 3 * c);
    this.gap = extend(this.gap, c);
    this.rA = extend(this.rA, 3 * c);
    this.rB = extend(this.rB, 3 * c);
    this.jac = extend(this.jac, 36 * c);
    this.yjac = extend(this.yjac, 36 * c);
    this.restitution = extend(this.restitution, c);
    this.friction = extend(this.friction, c);
    this.triangle = extend(this.triangle, c);
    this.nodes = extend(this.nodes, 3 * c);
    this.weights = extend(this.weights, 3 * c);
    this.capacity = c;
  }

  /**
   * Appends contact `src` of the arrays given (key, gap at src; normal and midpoint at
   * 3·src: a ContactBuffer's layout): bodies, key, normal, midpoint, gap; the frame, lever
   * arms (to the surface points p_a = point − (gap/2) n, p_b = point + (gap/2) n) and
   * Jacobian rows are computed from the current body positions. Returns its index. (Key
   * and gap are read here rather than passed: doubles passed to a call V8 does not inline
   * are boxed, two allocations per contact.)
   */
  push(
    bodyA: number,
    bodyB: number,
    keys: Float64Array,
    normal: Float64Array,
    point: Float64Array,
    gaps: Float64Array,
    src: number,
  ): number {
    const i = this.count++;
    const { sys } = this;
    const gap = gaps[src];
    this.bodyA[i] = bodyA;
    this.bodyB[i] = bodyB;
    this.triangle[i] = 0;
    this.key[i] = keys[src];
    this.gap[i] = gap;
    const f = this.frame;
    const o = 9 * i;
    f[o] = normal[3 * src];
    f[o + 1] = normal[3 * src + 1];
    f[o + 2] = normal[3 * src + 2];
    tangentFrame(f, o);
    const h = 0.5 * gap;
    for (let k = 0; k < 3; k++) {
      const p = point[3 * src + k];
      this.point[3 * i + k] = p;
      this.rA[3 * i + k] = bodyA >= 0 ? p - h * f[o + k] - sys.pos[3 * bodyA + k] : 0;
      this.rB[3 * i + k] = bodyB >= 0 ? p + h * f[o + k] - sys.pos[3 * bodyB + k] : 0;
    }
    this.jacobianRows(i);
    return i;
  }

  /**
   * Contact i's rows taken again where the bodies are now: its normal (unit, a to b) and
   * lever arms to the point p (3 at `at`), as push at gap 0.
   */
  moveRows(i: number, normal: Float64Array, n: number, p: Float64Array, at: number): void {
    const { sys } = this;
    const f = this.frame;
    const o = 9 * i;
    f[o] = normal[n];
    f[o + 1] = normal[n + 1];
    f[o + 2] = normal[n + 2];
    tangentFrame(f, o);
    const a = this.bodyA[i];
    const b = this.bodyB[i];
    for (let k = 0; k < 3; k++) {
      this.rA[3 * i + k] = a >= 0 ? p[at + k] - sys.pos[3 * a + k] : 0;
      this.rB[3 * i + k] = b >= 0 ? p[at + k] - sys.pos[3 * b + k] : 0;
    }
    this.jacobianRows(i);
  }

  /** Contact i's frame and lever arms (15 numbers) into out[o..]: for putRows. */
  takeRows(i: number, out: Float64Array, o: number): void {
    for (let k = 0; k < 9; k++) out[o + k] = this.frame[9 * i + k];
    for (let k = 0; k < 3; k++) {
      out[o + 9 + k] = this.rA[3 * i + k];
      out[o + 12 + k] = this.rB[3 * i + k];
    }
  }

  /** Contact i's frame and lever arms back from what takeRows wrote at o, and its rows. */
  putRows(i: number, from: Float64Array, o: number): void {
    for (let k = 0; k < 9; k++) this.frame[9 * i + k] = from[o + k];
    for (let k = 0; k < 3; k++) {
      this.rA[3 * i + k] = from[o + 9 + k];
      this.rB[3 * i + k] = from[o + 12 + k];
    }
    this.jacobianRows(i);
  }

  /**
   * Makes side a of contact i (just pushed, its bodyA the triangle's first node) the
   * triangle of particles nodes[3·src..] with weights weights[3·src..] (fem-faces.ts).
   */
  setTriangle(i: number, nodes: Int32Array, weights: Float64Array, src: number): void {
    this.triangle[i] = 1;
    for (let k = 0; k < 3; k++) {
      this.nodes[3 * i + k] = nodes[3 * src + k];
      this.weights[3 * i + k] = weights[3 * src + k];
    }
  }

  /** Whether some contact of the set has a triangle side (no factored form then). */
  hasTriangles(): boolean {
    for (let i = 0; i < this.count; i++) if (this.triangle[i] === 1) return true;
    return false;
  }

  /** Particles of side `side` of contact i: 3 for a triangle side, else 1 (its body). */
  private points(i: number, side: number): number {
    return side === 0 && this.triangle[i] === 1 ? 3 : 1;
  }

  /** Body of particle p of side `side` of contact i (points()). */
  private pointBody(i: number, side: number, p: number): number {
    if (side === 1) return this.bodyB[i];
    return this.triangle[i] === 1 ? this.nodes[3 * i + p] : this.bodyA[i];
  }

  /**
   * The weight of particle p of side `side` of contact i: w_p on a triangle side, else 1
   * (a product by 1 is exact: the other contacts' numbers do not change).
   */
  private pointWeight(i: number, side: number, p: number): number {
    return side === 0 && this.triangle[i] === 1 ? this.weights[3 * i + p] : 1;
  }

  /** Rows s[e_k, r × e_k] of A_ia (s = −1) and A_ib (s = +1). */
  private jacobianRows(i: number): void {
    const f = this.frame;
    const J = this.jac;
    for (let side = 0; side < 2; side++) {
      const s = side === 0 ? -1 : 1;
      const r = side === 0 ? this.rA : this.rB;
      const rx = r[3 * i];
      const ry = r[3 * i + 1];
      const rz = r[3 * i + 2];
      const base = 36 * i + 18 * side;
      for (let k = 0; k < 3; k++) {
        const ex = f[9 * i + 3 * k];
        const ey = f[9 * i + 3 * k + 1];
        const ez = f[9 * i + 3 * k + 2];
        const o = base + 6 * k;
        J[o] = s * ex;
        J[o + 1] = s * ey;
        J[o + 2] = s * ez;
        J[o + 3] = s * (ry * ez - rz * ey);
        J[o + 4] = s * (rz * ex - rx * ez);
        J[o + 5] = s * (rx * ey - ry * ex);
      }
    }
  }

  /**
   * A_i,k M⁻¹ A_i,kᵀ (1/kg): the inverse effective mass of local component k of contact i,
   * Σ over its particles of w² (|e_k|²/m + (r × e_k)ᵀ I⁻¹ (r × e_k)) with the world inverse
   * inertia of now (the particles of a contact are distinct bodies: no cross terms).
   */
  rowInverseMass(i: number, k: number): number {
    const { sys, jac } = this;
    let s = 0;
    for (let side = 0; side < 2; side++)
      for (let p = 0, np = this.points(i, side); p < np; p++) {
        const x = this.pointBody(i, side, p);
        const w = this.width(x);
        if (w === 0) continue;
        const f = this.pointWeight(i, side, p);
        const o = 36 * i + 18 * side + 6 * k;
        let q = (jac[o] * jac[o] + jac[o + 1] * jac[o + 1] + jac[o + 2] * jac[o + 2]) / sys.mass[x];
        if (w === 6) {
          const I = sys.inertiaWorldInv;
          for (let r = 0; r < 3; r++)
            for (let c = 0; c < 3; c++) q += jac[o + 3 + r] * I[9 * x + 3 * r + c] * jac[o + 3 + c];
        }
        s += f * f * q;
      }
    return s;
  }

  /** Number of dofs of body b (0 when fixed or the world), as of the last reset(). */
  width(b: number): number {
    return b < 0 ? 0 : this.bodyWidth[b];
  }

  /** out[dim·i .. dim·i + dim) = A_i u (local relative velocity from generalized u). */
  localVelocity(u: Float64Array, dim: ContactDim, out: Float64Array): void {
    const { sys, jac } = this;
    for (let i = 0; i < this.count; i++) {
      if (dim === 3 && this.triangle[i] === 0) {
        // two bodies, weight 1 (f·s = s exactly): the three rows in one pass over each
        // side's dofs, each side's sum added as below
        let u0 = 0;
        let u1 = 0;
        let u2 = 0;
        for (let side = 0; side < 2; side++) {
          const b = side === 0 ? this.bodyA[i] : this.bodyB[i];
          const w = this.width(b);
          if (w === 0) continue;
          const d = sys.dofOffset[b];
          const o = 36 * i + 18 * side;
          let s0 = 0;
          let s1 = 0;
          let s2 = 0;
          for (let c = 0; c < w; c++) {
            const x = u[d + c];
            s0 += jac[o + c] * x;
            s1 += jac[o + 6 + c] * x;
            s2 += jac[o + 12 + c] * x;
          }
          u0 += s0;
          u1 += s1;
          u2 += s2;
        }
        out[3 * i] = u0;
        out[3 * i + 1] = u1;
        out[3 * i + 2] = u2;
        continue;
      }
      for (let k = 0; k < dim; k++) out[dim * i + k] = 0;
      for (let side = 0; side < 2; side++)
        for (let p = 0, np = this.points(i, side); p < np; p++) {
          const b = this.pointBody(i, side, p);
          const w = this.width(b);
          if (w === 0) continue;
          const f = this.pointWeight(i, side, p);
          const d = sys.dofOffset[b];
          for (let k = 0; k < dim; k++) {
            const o = 36 * i + 18 * side + 6 * k;
            let s = 0;
            for (let c = 0; c < w; c++) s += jac[o + c] * u[d + c];
            out[dim * i + k] += f * s;
          }
        }
    }
  }

  /**
   * out[i] = u_n,i = A_i,n v, the normal relative velocity of contacts i = from … to − 1
   * from the bodies' current velocities (velocityRows).
   */
  normalVelocities(out: Float64Array, from = 0, to = this.count): void {
    for (let i = from; i < to; i++) this.velocityRows(out, i, i, 0, 1);
  }

  /**
   * Row k (0 n, 1 t1, 2 t2) of contact i's local velocity at the bodies' current
   * velocities (m/s; velocityRows).
   */
  rowVelocity(i: number, k: number): number {
    this.velocityRows(this.row, 0, i, k, 1);
    return this.row[0];
  }

  /**
   * out[at + r] = row k + r (0 n, 1 t1, 2 t2) of contact i's local velocity at the bodies'
   * current velocities (m/s), r = 0 … n − 1. Into an array: a double returned from a call
   * that V8 does not inline is boxed, an allocation per contact (the sticking drift's two
   * tangential rows a contact inside nonsmooth-contact.ts saveMemory: 2.1 KB a step for
   * S1-100, step-allocation.test.ts).
   */
  velocityRows(out: Float64Array, at: number, i: number, k: number, n: number): void {
    const { sys, jac } = this;
    for (let r = 0; r < n; r++) out[at + r] = 0;
    for (let side = 0; side < 2; side++)
      for (let p = 0, np = this.points(i, side); p < np; p++) {
        const b = this.pointBody(i, side, p);
        const w = this.width(b);
        if (w === 0) continue;
        const f = this.pointWeight(i, side, p);
        for (let r = 0; r < n; r++) {
          const o = 36 * i + 18 * side + 6 * (k + r);
          out[at + r] +=
            f *
            (jac[o] * sys.vel[3 * b] +
              jac[o + 1] * sys.vel[3 * b + 1] +
              jac[o + 2] * sys.vel[3 * b + 2]);
          if (w === 6)
            out[at + r] +=
              f *
              (jac[o + 3] * sys.omega[3 * b] +
                jac[o + 4] * sys.omega[3 * b + 1] +
                jac[o + 5] * sys.omega[3 * b + 2]);
        }
      }
  }

  /**
   * yjac ← Y_X A_iXᵀ for every contact side with a dynamic body. Y holds one row-major
   * w×w block per dynamic body at Y[yOff[block]] (block = sys.block[X]). With `massBlocks`
   * the caller asserts each block has the structure inverseMassBlocks gives,
   * diag(y I₃, B) with B 3×3 (rigid) or y I₃ (particle), and only those entries are read:
   * 3 + 9 instead of 36 products per row of a rigid body.
   */
  computeResponse(Y: Float64Array, yOff: Int32Array, dim: ContactDim, massBlocks = false): void {
    const { jac, yjac, sys } = this;
    for (let i = 0; i < this.count; i++)
      for (let side = 0; side < 2; side++) {
        const b = side === 0 ? this.bodyA[i] : this.bodyB[i];
        const w = this.width(b);
        if (w === 0) continue;
        const y0 = yOff[sys.block[b]];
        const a0 = 36 * i + 18 * side;
        if (massBlocks) {
          // the block's entries read once per side, not once per row
          const y = Y[y0];
          const rigid = w === 6;
          const b00 = rigid ? Y[y0 + 21] : 0;
          const b01 = rigid ? Y[y0 + 22] : 0;
          const b02 = rigid ? Y[y0 + 23] : 0;
          const b10 = rigid ? Y[y0 + 27] : 0;
          const b11 = rigid ? Y[y0 + 28] : 0;
          const b12 = rigid ? Y[y0 + 29] : 0;
          const b20 = rigid ? Y[y0 + 33] : 0;
          const b21 = rigid ? Y[y0 + 34] : 0;
          const b22 = rigid ? Y[y0 + 35] : 0;
          for (let k = 0; k < dim; k++) {
            const a = a0 + 6 * k;
            yjac[a] = y * jac[a];
            yjac[a + 1] = y * jac[a + 1];
            yjac[a + 2] = y * jac[a + 2];
            if (!rigid) continue;
            const j3 = jac[a + 3];
            const j4 = jac[a + 4];
            const j5 = jac[a + 5];
            yjac[a + 3] = b00 * j3 + b01 * j4 + b02 * j5;
            yjac[a + 4] = b10 * j3 + b11 * j4 + b12 * j5;
            yjac[a + 5] = b20 * j3 + b21 * j4 + b22 * j5;
          }
          continue;
        }
        for (let k = 0; k < dim; k++) {
          const a = a0 + 6 * k;
          for (let r = 0; r < w; r++) {
            let s = 0;
            const yr = y0 + r * w;
            for (let c = 0; c < w; c++) s += Y[yr + c] * jac[a + c];
            yjac[a + r] = s;
          }
        }
      }
  }

  /**
   * The Delassus operator W = scale·H Y Hᵀ in factored form (computeResponse first), dim
   * 1 (normal rows only) or 3: it reads jac and yjac in place (solvers/nonsmooth/factored.ts).
   * The operator is owned by the set and rebound on every call.
   */
  delassus(dim: ContactDim, scale: number): FactoredDelassus {
    const op = this.op.reset(this.count, dim, this.sys.numDofs, scale, this.jac, this.yjac);
    const off = this.sys.dofOffset;
    for (let i = 0; i < this.count; i++) {
      if (this.triangle[i] === 1)
        throw new Error("contact set: a triangle side has no factored form (dense path)");
      const a = this.bodyA[i];
      const b = this.bodyB[i];
      const wa = this.width(a);
      const wb = this.width(b);
      op.setSide(i, 0, wa > 0 ? off[a] : 0, wa);
      op.setSide(i, 1, wb > 0 ? off[b] : 0, wb);
    }
    return op;
  }

  /**
   * out[dofs] += A_i,kᵀ·s for one row k of contact i (a generalized force for a unit
   * local impulse), for the dense (column) path.
   */
  addRowTranspose(i: number, k: number, s: number, out: Float64Array): void {
    for (let side = 0; side < 2; side++)
      for (let p = 0, np = this.points(i, side); p < np; p++) {
        const x = this.pointBody(i, side, p);
        const w = this.width(x);
        if (w === 0) continue;
        const sf = s * this.pointWeight(i, side, p);
        const d = this.sys.dofOffset[x];
        const o = 36 * i + 18 * side + 6 * k;
        for (let c = 0; c < w; c++) out[d + c] += sf * this.jac[o + c];
      }
  }

  /** A_i,k · u for generalized u (one local component). */
  rowTimes(i: number, k: number, u: Float64Array): number {
    let s = 0;
    for (let side = 0; side < 2; side++)
      for (let p = 0, np = this.points(i, side); p < np; p++) {
        const x = this.pointBody(i, side, p);
        const w = this.width(x);
        if (w === 0) continue;
        const f = this.pointWeight(i, side, p);
        const d = this.sys.dofOffset[x];
        const o = 36 * i + 18 * side + 6 * k;
        for (let c = 0; c < w; c++) s += f * this.jac[o + c] * u[d + c];
      }
    return s;
  }
}

/**
 * Y ← blockdiag(M_X⁻¹)·s: the inverse mass blocks (1/m I₃; for rigid bodies
 * blockdiag(1/m I₃, I_world⁻¹)), row-major w×w per block at yOff[block].
 */
export function inverseMassBlocks(sys: BodySystem, Y: Float64Array, yOff: Int32Array, s = 1): void {
  for (let k = 0; k < sys.blockBody.length; k++) {
    const b = sys.blockBody[k];
    const w = sys.blockSizes[k];
    const o = yOff[k];
    for (let e = 0; e < w * w; e++) Y[o + e] = 0;
    const im = s / sys.mass[b];
    for (let d = 0; d < 3; d++) Y[o + d * w + d] = im;
    if (w === 6) {
      const I = sys.inertiaWorldInv;
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++) Y[o + (3 + r) * 6 + 3 + c] = s * I[9 * b + 3 * r + c];
    }
  }
}

/** Offsets of one w×w block per dynamic body (block order) and the total size. */
export function blockOffsets(sys: BodySystem): { yOff: Int32Array; size: number } {
  const yOff = new Int32Array(sys.blockSizes.length);
  let s = 0;
  for (let k = 0; k < sys.blockSizes.length; k++) {
    yOff[k] = s;
    s += sys.blockSizes[k] * sys.blockSizes[k];
  }
  return { yOff, size: s };
}
