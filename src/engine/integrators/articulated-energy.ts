/**
 * The energy groups of an articulated tree: the parts of a model whose energy balance holds
 * on its own, which the articulated integrator's steps keep (articulated.ts keepEnergy).
 *
 * A group is a set of the tree's slots joined by joints (one root's subtree) or by a force
 * between two of their bodies (a spring, a frame spring): with no force between two groups,
 * each one's T + V + Φ changes only by the work its own non-conservative forces do, so each
 * is projected onto its own balance (one scale for several pieces moved one piece's error
 * into the others: a projectile beside a double pendulum, exact for the pair's steps, went
 * 5.7e-12 m off in 1 s). The balance of group g over a step of h from t:
 *   T_g(t + h) + V_g(t + h) + Φ_g(t + h) = T_g(t) + V_g(t) + Φ_g(t) − ∫ P_g dt,
 * V_g its potentials (ForceEffector.potentialEnergy: gravity's −m g·x, springs', a constant
 * world load's −f·x), Φ_g its position servos'
 * stored functions (ForceEffector.storedEnergy: ½ k_p (q − q*)² within the effort limit,
 * of t through a moving target q*), and P_g the power the rest takes out,
 *   P_g = −Σ_{b∈g} (f_b · v_b + τ_b · ω_b) − Σ Φ̇,
 * (f_b, τ_b) the dissipative forces and torques at the body's centre (world frame, N and
 * N·m; ForceEffector.applyDissipativeForces: dashpots, dampers, the servos' whole effort,
 * a load's non-potential part), Φ̇ the servos' storedPower: what is left of a position
 * servo's power is its damping's and a moving target's, and a velocity servo's,
 * τ = k_v (q̇* − q̇), −τ q̇ ≠ 0 at its target. A spring's dashpot and a servo's effort act
 * within their spring's or joint's group, a damper on a body's absolute
 * velocity within the body's (forces/damper.ts).
 *
 * Only the forces whose bodies are known here are taken: gravity, the gyroscopic torque
 * (no work), springs, frame springs, dampers, joint actuators and point loads. Any other
 * force `of` returns null for, the steps then keeping no energy; a compliant joint limit
 * among them: its law's kink at the bound (the stiffness on past it, off before) is where
 * the explicit pair's embedded estimate fails, its two solutions off alike, and a step
 * crossing it leaves an energy defect far beyond what the estimate lets the projection
 * take back (a 10-link chain of 0.1 m links limited to ±0.5 rad at k = 2 N·m/rad, no
 * damping: defects of 1e-4 to 3e-4 J at estimates of 6e-8 to 3e-7 m; taken, 651 of its
 * first 1000 steps taken again and 165 left, the evaluations a step 9.6 → 57, its energy
 * still 2.7e-3 J off by 5 s).
 */
import { JointActuator } from "../actuators/actuator";
import type { ArticulatedTree } from "../dynamics/articulated-body";
import { DamperEffector } from "../forces/damper";
import type { ForceEffector } from "../forces/effector";
import { potentialEnergy } from "../forces/energy";
import { FrameSpringEffector } from "../forces/frame-spring";
import { GravityEffector } from "../forces/gravity";
import { GyroscopicEffector } from "../forces/gyroscopic";
import { PointForceEffector } from "../forces/point-force";
import { SpringEffector } from "../forces/spring";
import { addBodyKinetic, clearForces, kineticEnergy } from "../model/body-system";

/**
 * The bodies (indices, −1: ground) a taken force acts between, or null for one not taken
 * (gravity, the gyroscopic torque and dampers act per body, and are handled apart).
 */
function endsOf(e: ForceEffector): readonly [number, number] | null {
  if (e instanceof SpringEffector || e instanceof FrameSpringEffector)
    return [e.ends.a.body, e.ends.b.body];
  if (e instanceof JointActuator) return [e.coordinate.bodyA, e.coordinate.bodyB];
  if (e instanceof PointForceEffector) return [e.at.body, -1];
  return null;
}

/** Whether a force between bodies (endsOf) does work beyond its potential. */
function dissipates(e: ForceEffector): boolean {
  if (e instanceof SpringEffector) return e.damping > 0;
  if (e instanceof FrameSpringEffector) return e.damping > 0 || e.rotaryDamping > 0;
  // a servo's effort, a load's non-potential part (its torque, a force that varies or
  // follows the body)
  return true;
}

export class EnergyGroups {
  /** The number of groups. */
  readonly count: number;
  /** Each slot's group. */
  readonly slotGroup: Int32Array;
  /** Each entry of the tree's velocities u: its slot's group. */
  readonly uGroup: Int32Array;
  /** Whether a force does non-conservative work (the groups' powers are then integrated, `power`). */
  readonly damps: boolean;

  private constructor(
    private readonly tree: ArticulatedTree,
    private readonly effectors: readonly ForceEffector[],
    private readonly gravity: GravityEffector | null,
    /**
     * The forces between bodies (endsOf) with a potential or a stored function, and the
     * group of each (−1: neither end moves, its energy constant).
     */
    private readonly between: readonly ForceEffector[],
    private readonly betweenGroup: Int32Array,
    /** The effectors whose dissipative forces act (`power`). */
    private readonly dampers: readonly ForceEffector[],
    /** The servos (stored functions Φ) among `between`, and the group of each. */
    private readonly servos: readonly JointActuator[],
    private readonly servoGroup: Int32Array,
    slotGroup: Int32Array,
    count: number,
  ) {
    this.count = count;
    this.slotGroup = slotGroup;
    this.damps = dampers.length > 0;
    const uGroup = new Int32Array(tree.uSize);
    for (let i = 0; i < tree.numSlots; i++) {
      const end = i + 1 < tree.numSlots ? tree.uOffset[i + 1] : tree.uSize;
      for (let k = tree.uOffset[i]; k < end; k++) uGroup[k] = slotGroup[i];
    }
    this.uGroup = uGroup;
  }

  /**
   * The groups of the tree under `effectors`, or null where a force is not one of those
   * taken (file comment).
   */
  static of(tree: ArticulatedTree, effectors: readonly ForceEffector[]): EnergyGroups | null {
    const n = tree.numSlots;
    const slotOf = new Map<number, number>();
    for (let i = 0; i < n; i++) slotOf.set(tree.body[i], i);
    // union–find over the slots: a child with its parent, a force's two moving ends
    const root = Int32Array.from({ length: n }, (_, i) => i);
    const find = (i: number): number => {
      while (root[i] !== i) i = root[i] = root[root[i]];
      return i;
    };
    const join = (i: number, j: number) => {
      const a = find(i);
      const b = find(j);
      if (a !== b) root[Math.max(a, b)] = Math.min(a, b);
    };
    for (let i = 0; i < n; i++) if (tree.parent[i] >= 0) join(i, tree.parent[i]);
    let gravity: GravityEffector | null = null;
    const between: ForceEffector[] = [];
    const betweenSlot: number[] = [];
    const dampers: ForceEffector[] = [];
    for (const e of effectors) {
      const ends = endsOf(e);
      if (ends !== null) {
        const a = slotOf.get(ends[0]) ?? -1;
        const b = slotOf.get(ends[1]) ?? -1;
        if (a >= 0 && b >= 0) join(a, b);
        between.push(e);
        betweenSlot.push(a >= 0 ? a : b);
        if (dissipates(e)) dampers.push(e);
      } else if (e instanceof GravityEffector) {
        // (one, whose potential is per body)
        if (gravity !== null) return null;
        gravity = e;
      } else if (e instanceof DamperEffector) {
        if (e.linear > 0 || e.angular > 0) dampers.push(e);
      } else if (!(e instanceof GyroscopicEffector)) return null;
    }
    // the groups numbered in slot order (roots before their children)
    const number = new Int32Array(n).fill(-1);
    const slotGroup = new Int32Array(n);
    let count = 0;
    for (let i = 0; i < n; i++) {
      const r = find(i);
      if (number[r] < 0) number[r] = count++;
      slotGroup[i] = number[r];
    }
    const betweenGroup = Int32Array.from(betweenSlot, (s) => (s < 0 ? -1 : slotGroup[s]));
    const servos: JointActuator[] = [];
    const servoGroup: number[] = [];
    between.forEach((e, k) => {
      if (e instanceof JointActuator && betweenGroup[k] >= 0) {
        servos.push(e);
        servoGroup.push(betweenGroup[k]);
      }
    });
    return new EnergyGroups(
      tree,
      effectors,
      gravity,
      between,
      betweenGroup,
      dampers,
      servos,
      Int32Array.from(servoGroup),
      slotGroup,
      count,
    );
  }

  /**
   * Each group's kinetic energy (J) at the bodies' state into out[0 … count): Σ ½ m v² +
   * ½ ωᵀ I_w ω over its bodies (model/body-system.ts kineticEnergy, the one group's).
   */
  kinetic(out: Float64Array): void {
    const sys = this.tree.sys;
    if (this.count === 1) {
      out[0] = kineticEnergy(sys);
      return;
    }
    out.fill(0);
    for (let i = 0; i < this.tree.numSlots; i++)
      out[this.slotGroup[i]] += addBodyKinetic(sys, this.tree.body[i], 0);
  }

  /**
   * Each group's potential energy V_g + Φ_g (J) at t and the bodies' state into
   * out[0 … count): its bodies' −m g·x, its forces' potentials (springs', loads')
   * and its servos' stored functions (a force neither of whose ends moves is constant,
   * left out).
   */
  potential(out: Float64Array, t: number): void {
    const { servos } = this;
    if (this.count === 1) {
      let phi = 0;
      for (let k = 0; k < servos.length; k++) phi += servos[k].storedEnergy(t);
      out[0] = potentialEnergy(this.effectors) + phi;
      return;
    }
    out.fill(0);
    const { tree, gravity } = this;
    if (gravity !== null) {
      const { mass, pos } = tree.sys;
      const g = gravity.g;
      for (let i = 0; i < tree.numSlots; i++) {
        const b = tree.body[i];
        out[this.slotGroup[i]] -=
          mass[b] * (g[0] * pos[3 * b] + g[1] * pos[3 * b + 1] + g[2] * pos[3 * b + 2]);
      }
    }
    for (let k = 0; k < this.between.length; k++)
      if (this.betweenGroup[k] >= 0) out[this.betweenGroup[k]] += this.between[k].potentialEnergy();
    for (let k = 0; k < servos.length; k++) out[this.servoGroup[k]] += servos[k].storedEnergy(t);
  }

  /**
   * Each group's power P_g (W: what its non-conservative forces take out, less its servos'
   * Φ̇; negative where a servo or a load drives) at t and the bodies' state into
   * out[offset … offset + count) (file comment). Overwrites the bodies' force and torque
   * accumulators.
   */
  power(t: number, out: Float64Array, offset: number): void {
    const { tree, dampers } = this;
    const sys = tree.sys;
    clearForces(sys);
    for (let k = 0; k < dampers.length; k++) dampers[k].applyDissipativeForces?.(t);
    for (let g = 0; g < this.count; g++) out[offset + g] = 0;
    const { force: f, torque: tau, vel: v, omega: w } = sys;
    for (let i = 0; i < tree.numSlots; i++) {
      const b = 3 * tree.body[i];
      out[offset + this.slotGroup[i]] -=
        f[b] * v[b] +
        f[b + 1] * v[b + 1] +
        f[b + 2] * v[b + 2] +
        tau[b] * w[b] +
        tau[b + 1] * w[b + 1] +
        tau[b + 2] * w[b + 2];
    }
    const { servos } = this;
    for (let k = 0; k < servos.length; k++)
      out[offset + this.servoGroup[k]] -= servos[k].storedPower(t);
  }
}
