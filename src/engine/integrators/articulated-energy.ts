/**
 * The energy groups of an articulated tree: the parts of a model whose energy balance holds
 * on its own, which the articulated integrator's steps keep (articulated.ts keepEnergy).
 *
 * A group is a set of the tree's slots joined by joints (one root's subtree) or by a force
 * between two of their bodies (a spring, a frame spring): with no force between two groups,
 * each one's T + V changes only by the work its own dampers do, so each is projected onto
 * its own balance (one scale for several pieces moved one piece's error into the others:
 * a projectile beside a double pendulum, exact for the pair's steps, went 5.7e-12 m off in
 * 1 s). The balance of group g over a step of h from t:
 *   T_g(t + h) + V_g(t + h) = T_g(t) + V_g(t) − ∫ P_g dt,
 * P_g ≥ 0 the power its dampers take out, −Σ_{b∈g} (f_b · v_b + τ_b · ω_b) with (f_b, τ_b)
 * their forces and torques at the body's centre (world frame, N and N·m); a spring's
 * dashpot acts within its spring's group, a damper on a body's absolute velocity within
 * the body's (forces/damper.ts).
 *
 * Only the forces whose bodies and power are known here are taken: gravity, the gyroscopic
 * torque (no work), springs, frame springs and dampers. Any other force (a load, an
 * actuator, a compliant joint limit) does work from outside the model, and `of` returns
 * null: the steps then keep no energy.
 */
import type { ArticulatedTree } from "../dynamics/articulated-body";
import { DamperEffector } from "../forces/damper";
import type { ForceEffector } from "../forces/effector";
import { potentialEnergy } from "../forces/energy";
import { FrameSpringEffector } from "../forces/frame-spring";
import { GravityEffector } from "../forces/gravity";
import { GyroscopicEffector } from "../forces/gyroscopic";
import { SpringEffector } from "../forces/spring";
import { BodyKind, clearForces, kineticEnergy } from "../model/body-system";

export class EnergyGroups {
  /** The number of groups. */
  readonly count: number;
  /** Each slot's group. */
  readonly slotGroup: Int32Array;
  /** Each entry of the tree's velocities u: its slot's group. */
  readonly uGroup: Int32Array;
  /** Whether a force damps (the groups' powers are then integrated, `power`). */
  readonly damps: boolean;

  private constructor(
    private readonly tree: ArticulatedTree,
    private readonly effectors: readonly ForceEffector[],
    private readonly gravity: GravityEffector | null,
    /** The springs and frame springs, and the group of each (−1: neither end moves). */
    private readonly springs: readonly ForceEffector[],
    private readonly springGroup: Int32Array,
    /** The effectors whose dissipative forces act (a damping coefficient above 0). */
    private readonly dampers: readonly ForceEffector[],
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
    // union–find over the slots: a child with its parent, a spring's two moving ends
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
    const springs: ForceEffector[] = [];
    const springSlot: number[] = [];
    const dampers: ForceEffector[] = [];
    for (const e of effectors) {
      if (e instanceof GravityEffector) {
        // (one, whose potential is per body)
        if (gravity !== null) return null;
        gravity = e;
      } else if (e instanceof SpringEffector || e instanceof FrameSpringEffector) {
        const a = slotOf.get(e.ends.a.body) ?? -1;
        const b = slotOf.get(e.ends.b.body) ?? -1;
        if (a >= 0 && b >= 0) join(a, b);
        springs.push(e);
        springSlot.push(a >= 0 ? a : b);
        const damped =
          e instanceof SpringEffector ? e.damping > 0 : e.damping > 0 || e.rotaryDamping > 0;
        if (damped) dampers.push(e);
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
    const springGroup = Int32Array.from(springSlot, (s) => (s < 0 ? -1 : slotGroup[s]));
    return new EnergyGroups(
      tree,
      effectors,
      gravity,
      springs,
      springGroup,
      dampers,
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
    const { vel: v, omega: w, inertiaWorld: I } = sys;
    for (let i = 0; i < this.tree.numSlots; i++) {
      const b = this.tree.body[i];
      let e = 0.5 * sys.mass[b] * (v[3 * b] ** 2 + v[3 * b + 1] ** 2 + v[3 * b + 2] ** 2);
      if (sys.kind[b] === BodyKind.RIGID) {
        const k = 9 * b;
        const x = w[3 * b];
        const y = w[3 * b + 1];
        const z = w[3 * b + 2];
        e +=
          0.5 *
          (x * (I[k] * x + I[k + 1] * y + I[k + 2] * z) +
            y * (I[k + 3] * x + I[k + 4] * y + I[k + 5] * z) +
            z * (I[k + 6] * x + I[k + 7] * y + I[k + 8] * z));
      }
      out[this.slotGroup[i]] += e;
    }
  }

  /**
   * Each group's potential energy (J) into out[0 … count): its bodies' −m g·x and its
   * springs' (a spring neither of whose ends moves is constant, left out).
   */
  potential(out: Float64Array): void {
    if (this.count === 1) {
      out[0] = potentialEnergy(this.effectors);
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
    for (let k = 0; k < this.springs.length; k++)
      if (this.springGroup[k] >= 0) out[this.springGroup[k]] += this.springs[k].potentialEnergy();
  }

  /**
   * Each group's damping power P_g (W, ≥ 0: what its dampers take out) at t and the bodies'
   * state into out[offset … offset + count) (file comment). Overwrites the bodies' force
   * and torque accumulators.
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
  }
}
