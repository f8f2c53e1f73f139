/**
 * A long thin capsule's axis samples on fem faces (src/engine/contact/area.ts
 * capsuleSampleIntervals, fem-faces.ts "Rigid shapes"): at most 64 intervals, spacing
 * s = max(r, 2L/64). A 2 kg capsule of r = 0.01 m, L = 2 m (L/r = 200: before, 400 intervals,
 * 401 points each querying the faces every detection) lying along x across a stiff fem
 * block (0.6 × 0.6 × 0.2 m, one cell, bottom fixed, E = 1e10 Pa), its ends 1.7 m beyond it.
 * Now s = 4/64 = 0.0625 m: the samples at x_j = −2 + 0.0625 j over the face, |x_j| < 0.3, are
 * j = 28 … 36, N = 9 (before: 59, at 0.01 m).
 *  - a law per contact: the N equal springs carry m g, δ = m g/(N k), Σ F_n n_z = m g;
 *  - a law per unit area: k δ N s 2√(2rδ − δ²) = m g (each sample's strip, capsuleSampleArea),
 *    the sampled length N s = 0.5625 m within one spacing of the face's W = 0.6 m, the bound
 *    on the force's error the cap keeps (|N s − W| ≤ s).
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { femNodeId } from "../../../src/engine/forces/fem/build";
import { loadModel } from "../../../src/engine/index";

const G = 9.81;
const MASS = 2;
const R = 0.01;
const L = 2;
const TOP = 0.2;

function scene(behavior: Record<string, unknown>) {
  const s = Math.SQRT1_2;
  return loadModel({
    gravity: [0, 0, -G],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane" }] },
      {
        id: "rod",
        mass: MASS,
        position: [0, 0, TOP + R],
        // local z (the axis) onto world x
        orientation: [s, 0, s, 0],
        shapes: [{ type: "capsule", radius: R, halfLength: L }],
      },
    ],
    fem: [
      {
        id: "blk",
        box: { size: [0.6, 0.6, 0.2], resolution: [1, 1, 1], center: [0, 0, 0.1] },
        fixedFaces: ["-z"],
        density: 500,
        youngModulus: 1e10,
        poissonRatio: 0.3,
        material: "stvk",
      },
    ],
    contact: { method: "smc", behavior },
    solver: { integrator: "backward-euler", dt: 0.01, rayleighStiffness: 1e-3 },
  } as ModelInput);
}

/** Rests 3 s; the rod's depth under the top face (its 4 top nodes' mean), Σ F_n n_z, count. */
function rest(behavior: Record<string, unknown>) {
  const sim = scene(behavior);
  sim.step(300);
  const sys = sim.system;
  let top = 0;
  for (let k = 0; k < 8; k++) {
    const z = sys.pos[3 * (sys.index.get(femNodeId("blk", k)) as number) + 2];
    if (z > 0.1) top += z / 4;
  }
  let force = 0;
  let count = 0;
  for (const c of sim.state().contacts)
    if (c.bodies[1] === "rod") {
      force += c.normalForce * c.normal[2];
      count++;
    }
  const b = sys.index.get("rod") as number;
  return { depth: top - (sys.pos[3 * b + 2] - R), force, count };
}

describe("a long thin capsule (L/r = 200) lying across a stiff fem block", () => {
  const s = (2 * L) / 64;
  // the samples over the 0.6 m face: |−L + s j| < 0.3
  let N = 0;
  for (let j = 0; j <= 64; j++) if (Math.abs(-L + s * j) < 0.3) N++;

  it("a law per contact: its N = 9 samples over the face rest at m g/(N k), forces m g", () => {
    expect(N).toBe(9);
    const k = 1e5;
    const { depth, force, count } = rest({ type: "linear", stiffness: k, stepDamping: 0.5 });
    expect(count).toBe(N);
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    expect(Math.abs(depth / ((MASS * G) / (N * k)) - 1), `depth ${depth} m`).toBeLessThan(1e-4);
  });

  it("a law per unit area: k δ N s 2√(2rδ − δ²) = m g, N s within s of the face's 0.6 m", () => {
    expect(Math.abs(N * s - 0.6)).toBeLessThanOrEqual(s);
    const k = 1e8;
    const { depth, force } = rest({
      type: "linear",
      stiffness: k,
      perUnitArea: true,
      stepDamping: 0.5,
    });
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    // bisection on the monotone load k δ N s 2√(2rδ − δ²)
    const load = (d: number) => k * d * N * s * 2 * Math.sqrt(2 * R * d - d * d);
    let lo = 0;
    let hi = 1e-3;
    for (let i = 0; i < 200; i++) {
      const mid = 0.5 * (lo + hi);
      if (load(mid) < MASS * G) lo = mid;
      else hi = mid;
    }
    expect(Math.abs(depth / lo - 1), `depth ${depth} m, closed form ${lo}`).toBeLessThan(1e-4);
  });
});
