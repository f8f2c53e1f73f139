/**
 * The energy groups of articulated.ts's keepEnergy (src/engine/integrators/articulated-energy.ts):
 * which slots balance their energy together, and each group's kinetic and potential
 * energy and damping power, against sums written out here over the bodies.
 *
 * Two chains of 3 hinged links (0.2 m, 0.3 kg, thin rods about body z) hang from the
 * ground at y = 0 (a) and y = 1 m (b), hinges about y. Their velocities are set by hand in
 * the xz plane (ω along y, about which every link's moment is m L²/12 whatever its turn
 * about y), so each body's T = ½ m |v|² + ½ (m L²/12) ω_y², V = m g z, and a damper's power
 * c_l |v|² + c_a |ω|².
 */
import { describe, expect, it } from "vitest";
import { createActuation } from "../../../src/engine/actuators/build";
import { buildTree } from "../../../src/engine/dynamics/articulated-body";
import { createForceEffectors } from "../../../src/engine/forces/build";
import type { ForceEffector } from "../../../src/engine/forces/effector";
import { potentialEnergy } from "../../../src/engine/forces/energy";
import { loadModel } from "../../../src/engine/index";
import { EnergyGroups } from "../../../src/engine/integrators/articulated-energy";
import { kineticEnergy } from "../../../src/engine/model/body-system";

const L = 0.2;
const M = 0.3;
const G = 9.81;
const LINKS = 3;

function chain(prefix: string, y: number) {
  const q = [Math.SQRT1_2, 0, Math.SQRT1_2, 0]; // the link's z axis along world +x
  const bodies = Array.from({ length: LINKS }, (_, i) => ({
    id: `${prefix}${i}`,
    mass: M,
    position: [(i + 0.5) * L, y, 0],
    orientation: q,
    inertia: [(M * L * L) / 12, (M * L * L) / 12, 1e-4 * M * L * L],
  }));
  const joints = bodies.map((_, i) => ({
    id: `${prefix}j${i}`,
    type: "revolute",
    a:
      i === 0
        ? { body: "ground", point: [0, y, 0] }
        : { body: `${prefix}${i - 1}`, point: [0, 0, L / 2] },
    b: { body: `${prefix}${i}`, point: [0, 0, -L / 2] },
    axis: [0, 1, 0],
  }));
  return { bodies, joints };
}

function setUp(forces: Record<string, unknown>[]) {
  const a = chain("a", 0);
  const b = chain("b", 1);
  const sim = loadModel({
    gravity: [0, 0, -G],
    bodies: [...a.bodies, ...b.bodies],
    joints: [...a.joints, ...b.joints],
    forces,
    solver: { integrator: "articulated" },
  });
  const sys = sim.system;
  const pose = { pos: Float64Array.from(sys.pos), quat: Float64Array.from(sys.quat) };
  const tree = buildTree(sys, sim.model.joints, [], pose);
  const { effectors } = createForceEffectors(sim.model.forces, sys, sim.model.gravity, true);
  // planar velocities, different on every body (not the joints' motion: the groups read
  // the bodies' states as they are)
  for (let n = 0; n < sys.numBodies; n++) {
    sys.vel[3 * n] = 0.3 + 0.1 * n;
    sys.vel[3 * n + 1] = 0;
    sys.vel[3 * n + 2] = -0.2 * n;
    sys.omega[3 * n] = 0;
    sys.omega[3 * n + 1] = 1 - 0.4 * n;
    sys.omega[3 * n + 2] = 0;
  }
  const body = (id: string) => sys.index.get(id) as number;
  const sum = (prefix: string, f: (n: number) => number) =>
    Array.from({ length: LINKS }, (_, i) => f(body(`${prefix}${i}`))).reduce((s, x) => s + x);
  return { sys, tree, effectors, body, sum };
}

describe("articulated's energy groups", () => {
  it("two chains from the ground are two groups, each its own T, V and damping power", () => {
    const cl = 0.05;
    const ca = 0.002;
    const { sys, tree, effectors, body, sum } = setUp([
      { id: "drag", type: "damper", linear: cl, angular: ca },
    ]);
    const groups = EnergyGroups.of(tree, effectors) as EnergyGroups;
    expect(groups).not.toBeNull();
    expect(groups.count).toBe(2);
    expect(groups.damps).toBe(true);
    const slotOf = (id: string) => Array.from(tree.body).indexOf(body(id));
    const ga = groups.slotGroup[slotOf("a0")];
    const gb = groups.slotGroup[slotOf("b0")];
    expect(ga).not.toBe(gb);
    for (let i = 1; i < LINKS; i++) {
      expect(groups.slotGroup[slotOf(`a${i}`)]).toBe(ga);
      expect(groups.slotGroup[slotOf(`b${i}`)]).toBe(gb);
    }
    const v = (n: number) =>
      sys.vel[3 * n] ** 2 + sys.vel[3 * n + 1] ** 2 + sys.vel[3 * n + 2] ** 2;
    const w = (n: number) => sys.omega[3 * n + 1] ** 2;
    const T = (n: number) => 0.5 * M * v(n) + 0.5 * ((M * L * L) / 12) * w(n);
    const V = (n: number) => M * G * sys.pos[3 * n + 2];
    const P = (n: number) => cl * v(n) + ca * w(n);
    const out = new Float64Array(2);
    groups.kinetic(out);
    expect(out[ga]).toBeCloseTo(sum("a", T), 14);
    expect(out[gb]).toBeCloseTo(sum("b", T), 14);
    expect(out[ga] + out[gb]).toBeCloseTo(kineticEnergy(sys), 14);
    groups.potential(out, 0);
    expect(out[ga]).toBeCloseTo(sum("a", V), 14);
    expect(out[gb]).toBeCloseTo(sum("b", V), 14);
    const power = new Float64Array(5);
    groups.power(0, power, 3);
    expect(power[3 + ga]).toBeCloseTo(sum("a", P), 14);
    expect(power[3 + gb]).toBeCloseTo(sum("b", P), 14);
  });

  it("a spring between the chains makes them one group, its energy in V", () => {
    const k = 40;
    const { tree, effectors } = setUp([
      {
        id: "tie",
        type: "spring",
        a: { body: "a2", point: [0, 0, L / 2] },
        b: { body: "b2", point: [0, 0, L / 2] },
        stiffness: k,
        restLength: 0.5,
      },
    ]);
    const groups = EnergyGroups.of(tree, effectors) as EnergyGroups;
    expect(groups.count).toBe(1);
    expect(groups.damps).toBe(false);
    const out = new Float64Array(1);
    groups.potential(out, 0);
    // the tips 1 m apart (the chains' planes): ½ k (1 − 0.5)² beside the links' m g z = 0
    expect(out[0]).toBeCloseTo(0.5 * k * 0.25, 12);
    expect(out[0]).toBe(potentialEnergy(effectors));
  });

  it("a spring within each chain keeps them apart, its energy in its chain's V", () => {
    const k = 40;
    const { tree, effectors, body } = setUp([
      {
        id: "inner",
        type: "spring",
        a: { body: "a0", point: [0, 0, 0] },
        b: { body: "a2", point: [0, 0, 0] },
        stiffness: k,
        restLength: 0.3,
      },
    ]);
    const groups = EnergyGroups.of(tree, effectors) as EnergyGroups;
    expect(groups.count).toBe(2);
    const ga = groups.slotGroup[Array.from(tree.body).indexOf(body("a0"))];
    const out = new Float64Array(2);
    groups.potential(out, 0);
    // the centres 2 L apart: ½ k (2 L − 0.3)² in chain a's, nothing in b's (at z = 0)
    expect(out[ga]).toBeCloseTo(0.5 * k * (2 * L - 0.3) ** 2, 12);
    expect(out[1 - ga]).toBe(0);
  });

  it("servos and a load: each in its joint's or body's group, V + Φ and P − Φ̇", () => {
    // a velocity servo at a's first hinge (q̇ = ω_y of a0); a position servo toward 0.2 rad
    // at b's second (q̇ = ω_y(b1) − ω_y(b0), q = 0 in the model pose); a constant world
    // load on a2's tip
    const [kv, target, kp, kd] = [0.03, 0.5, 2, 0.04];
    const f: [number, number, number] = [0.4, -0.3, 0.2];
    const {
      sys,
      tree,
      body,
      effectors: forces,
    } = setUp([
      { id: "push", type: "pointForce", at: { body: "a2", point: [0, 0, L / 2] }, force: f },
    ]);
    const sim = loadModel({
      gravity: [0, 0, -G],
      bodies: [...chain("a", 0).bodies, ...chain("b", 1).bodies],
      joints: [...chain("a", 0).joints, ...chain("b", 1).joints],
      actuators: [
        { id: "spin", type: "velocity", joint: "aj0", kv, target },
        { id: "hold", type: "position", joint: "bj1", kp, kd, target: 0.2 },
      ],
      solver: { integrator: "articulated" },
    });
    // (sim: the actuators parsed, built on setUp's bodies)
    const { actuators } = createActuation(sim.model.joints, sim.model.actuators, sys);
    const effectors = [...forces, ...actuators];
    const groups = EnergyGroups.of(tree, effectors) as EnergyGroups;
    expect(groups).not.toBeNull();
    expect(groups.count).toBe(2);
    expect(groups.damps).toBe(true);
    const slotOf = (id: string) => Array.from(tree.body).indexOf(body(id));
    const ga = groups.slotGroup[slotOf("a0")];
    const gb = groups.slotGroup[slotOf("b0")];
    // V: the links' m g z are 0 (z = 0); a's the load's −f·x at a2's tip (3 L, 0, 0), b's
    // the servo's ½ k_p (0 − 0.2)²
    const V = new Float64Array(2);
    groups.potential(V, 0);
    expect(V[ga]).toBeCloseTo(-f[0] * 3 * L, 14);
    expect(V[gb]).toBeCloseTo(0.5 * kp * 0.04, 14);
    // P: a's the velocity servo's −k_v (q̇* − q̇) q̇ (the load's work is its potential's); b's
    // the servo's k_d q̇² (its −τ q̇ less Φ̇ = k_p e q̇)
    const w = (id: string) => sys.omega[3 * body(id) + 1];
    const qa = w("a0");
    const qb1 = w("b1") - w("b0");
    const P = new Float64Array(2);
    groups.power(0, P, 0);
    expect(P[ga]).toBeCloseTo(-kv * (target - qa) * qa, 14);
    expect(P[gb]).toBeCloseTo(kd * qb1 * qb1, 14);
  });

  it("a compliant joint limit, or a force it does not know, keeps no energy", () => {
    const { sys, tree, effectors } = setUp([]);
    const { joints } = chain("a", 0);
    const limited = [{ ...joints[0], limits: { lower: -0.5, upper: 0.5 } }];
    const sim = loadModel({ bodies: chain("a", 0).bodies, joints: limited });
    const { limits } = createActuation(sim.model.joints, [], sys);
    expect(limits.length).toBe(1);
    expect(EnergyGroups.of(tree, [...effectors, ...limits])).toBeNull();
    const other = { ...effectors[0] } as ForceEffector;
    expect(EnergyGroups.of(tree, [...effectors, other])).toBeNull();
  });
});
