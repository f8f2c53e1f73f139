/**
 * Edge–edge contact between a rigid box and the ridges of a fem surface
 * (src/engine/contact/fem-faces.ts, "Edges"): a box's edge crossing a convex fold of the
 * surface meets it at the closest points of the two segments, normal ∝ (box edge) × (fem
 * edge) out of the fem body, gap the signed distance between them along it.
 *
 * The scene: two fixed-footed fem roofs (triangular prisms, 3 tetrahedra each, E = 1e10 Pa:
 * their ridges move ~1e-8 m under the load) along y, ridges at x = ±0.2 m, z = 0.05 m,
 * y ∈ [−0.15, 0.15]; a 2 kg plate of 0.6 × 0.2 × 0.04 m lying flat across both. Its long
 * bottom edges (y = ±0.1) cross each ridge: 4 edge–edge contacts, normal +z. None of its
 * points meets a face: its edge samples (x = ±0.1, ±0.3: boxSampleIntervals 3, 1, 1) are off
 * both roofs' footprints (x ∈ [0.15, 0.25] and its mirror), the roofs' vertices (|y| = 0.15)
 * off its footprint (|y| ≤ 0.1). Before, the plate fell through both ridges to the floor
 * (its bottom at z = 0, 0.05 m under the ridges).
 *  - smc, a law per contact: the 4 contacts (equal by symmetry) carry m g, δ = m g/(4 k);
 *  - smc, a law per unit area: each contact's area the box rule at its edge's midpoint,
 *    the bottom face's 4 h_x h_y over its rim's 2 (m_x + m_y) = 8 samples, δ = m g/(4 k A);
 *  - nsc (moreau-jean): the plate dropped 2 cm comes to rest on the ridges, its depth within
 *    the projection's tolerance, Σ F_n n_z = m g;
 *  - without gravity, the roofs free: the plate striking the ridges at 0.5 m/s keeps Σ m v to
 *    1e-10 of it and moves on with the roofs at M v₀/(M + m) (e = 0).
 * A box edge-first on a ridge (one point, or two on one line) balances unstably, as any body
 * on a knife edge: the plate's two edges on two ridges make a stable rest.
 * Depth: the ridges' height (the mean of their four apex nodes) minus the plate's bottom.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { femNodeId } from "../../../src/engine/forces/fem/build";
import { loadModel } from "../../../src/engine/index";

const G = 9.81;
const MASS = 2;
const H = [0.3, 0.1, 0.02];
const RIDGE = 0.05;

/** A roof along y at x = xc: base half width 0.05 m and height 0.05 m (45° slopes). */
function roof(id: string, xc: number, fixed = true) {
  const b = 0.05;
  const W = 0.15;
  const nodes: number[][] = [];
  for (const y of [-W, W]) nodes.push([xc - b, y, 0], [xc + b, y, 0], [xc, y, RIDGE]);
  return {
    id,
    nodes,
    // the prism 0 1 2 / 3 4 5 in three tetrahedra
    elements: [
      [0, 1, 2, 3],
      [1, 2, 3, 4],
      [2, 3, 4, 5],
    ],
    fixedNodes: fixed ? [0, 1, 3, 4] : [],
    density: 500,
    youngModulus: 1e10,
    poissonRatio: 0.3,
    material: "stvk",
  };
}

function scene(contact: Record<string, unknown>, drop = 0, free = false) {
  return loadModel({
    gravity: [0, 0, free ? 0 : -G],
    bodies: [
      ...(free ? [] : [{ id: "floor", fixed: true, shapes: [{ type: "plane" }] }]),
      {
        id: "plate",
        mass: MASS,
        position: [0, 0, RIDGE + H[2] + drop],
        velocity: free ? [0, 0, -0.5] : [0, 0, 0],
        shapes: [{ type: "box", halfExtents: H }],
      },
    ],
    fem: [roof("left", -0.2, !free), roof("right", 0.2, !free)],
    contact,
    solver: {
      integrator: contact.method === "nsc" ? "moreau-jean" : "backward-euler",
      dt: 0.01,
      rayleighStiffness: 1e-3,
    },
  } as ModelInput);
}

type Sim = ReturnType<typeof loadModel>;

/** The ridges' height, the mean of the 4 apex nodes, less the plate's bottom (m). */
function depth(sim: Sim): number {
  const s = sim.system;
  let ridge = 0;
  for (const id of ["left", "right"])
    for (const k of [2, 5]) ridge += s.pos[3 * (s.index.get(femNodeId(id, k)) as number) + 2] / 4;
  const b = s.index.get("plate") as number;
  return ridge - (s.pos[3 * b + 2] - H[2]);
}

/** Σ F_n n_z on the plate over its contacts (N; the fem side is a, the plate b) and their count. */
function support(sim: Sim): { force: number; count: number } {
  let force = 0;
  let count = 0;
  for (const c of sim.state().contacts) {
    if (c.bodies[1] !== "plate") continue;
    force += c.normalForce * c.normal[2];
    count++;
  }
  return { force, count };
}

describe("a plate lying across two fem ridges, no point of either over the other's faces", () => {
  it("smc, a law per contact: rests at m g/(4 k) on its 4 edge crossings", () => {
    const k = 1e5;
    const sim = scene({
      method: "smc",
      behavior: { type: "linear", stiffness: k, stepDamping: 0.5 },
    });
    sim.step(300);
    const { force, count } = support(sim);
    expect(count).toBe(4);
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    const d = depth(sim);
    expect(Math.abs(d / ((MASS * G) / (4 * k)) - 1), `depth ${d} m`).toBeLessThan(1e-6);
  });

  it("smc, a law per unit area: rests at m g/(4 k A), A = 4 h_x h_y / 8 the bottom face's rim share", () => {
    const k = 1e8;
    const sim = scene({
      method: "smc",
      behavior: { type: "linear", stiffness: k, perUnitArea: true, stepDamping: 0.5 },
    });
    sim.step(300);
    const { force, count } = support(sim);
    expect(count).toBe(4);
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    const A = (4 * H[0] * H[1]) / 8;
    const d = depth(sim);
    expect(Math.abs(d / ((MASS * G) / (4 * k * A)) - 1), `depth ${d} m`).toBeLessThan(1e-6);
  });

  it("nsc moreau-jean, dropped 2 cm: never through the ridges, at rest on them over 4 s, forces m g", () => {
    const sim = scene({ method: "nsc", restitution: 0 }, 0.02);
    let deepest = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < 400; k++) {
      sim.step(1);
      deepest = Math.max(deepest, depth(sim));
    }
    // the projection's tolerance 2e-3 ℓ, ℓ = 0.02 m the plate's smallest half extent
    expect(deepest, "deepest (m)").toBeLessThan(4e-5);
    const { force, count } = support(sim);
    expect(count).toBe(4);
    expect(Math.abs(depth(sim)), "depth at rest (m)").toBeLessThan(4e-5);
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
  });

  it("nsc moreau-jean, free roofs without gravity: the plate striking the ridges at 0.5 m/s keeps Σ m v to round-off", () => {
    const sim = scene({ method: "nsc", restitution: 0 }, 0.005, true);
    const sys = sim.system;
    const momentum = () => {
      let p = 0;
      for (let b = 0; b < sys.numBodies; b++)
        if (sys.dofOffset[b] >= 0) p += sys.mass[b] * sys.vel[3 * b + 2];
      return p;
    };
    const p0 = momentum();
    let struck = false;
    let worst = 0;
    for (let k = 0; k < 100; k++) {
      sim.step(1);
      if (support(sim).count === 4) struck = true;
      // each edge contact's impulse on the plate is balanced by −(1 − w), −w of it on the
      // ridge's two nodes (2.8e-11 N s over 100 steps: the stiff roofs' elastic forces' rounding)
      worst = Math.max(worst, Math.abs(momentum() - p0));
    }
    expect(worst, "Σ m v drift (N s)").toBeLessThan(1e-10 * Math.abs(p0));
    expect(struck).toBe(true);
    // a perfectly inelastic strike (e = 0) on the stiff roofs: plate and roofs move on
    // together at M v₀/(M + m), m = 2 · ρ · (½ · 0.1 · 0.05 · 0.3) = 0.75 kg (before, the
    // plate went through at −0.5 m/s)
    const b = sys.index.get("plate") as number;
    const common = (MASS * -0.5) / (MASS + 2 * 500 * 0.5 * 0.1 * 0.05 * 0.3);
    expect(Math.abs(sys.vel[3 * b + 2] / common - 1), `${sys.vel[3 * b + 2]} m/s`).toBeLessThan(
      1e-4,
    );
  });
});
