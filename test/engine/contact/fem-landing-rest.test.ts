/**
 * A fem block arriving at the floor at speed 0: at rest 1e-6 m above it under gravity
 * (nonsmooth-contact.ts updateIndexSet: the fem nodes' closing band takes the forces'
 * h² a_n). Its bottom nodes' contacts were open (g > ε_act) and not closing on their
 * velocity (u_n⁻ = 0), so the smooth step carried the block g h²/2 = 2 mm into the floor
 * (h = 20 ms), and the projection pushed its bottom nodes alone back, into its elements: the
 * block's 3.9 J (its potential energy above the floor) went to 13.6 J in that step, rose by
 * up to 19.8 J a step after, energy.error reached −41 J, and the block ended 6.1e-5 m below
 * where its weight compresses it to, still moving (1.3e-4 J kinetic after 1.5 s).
 */
import { describe, expect, it } from "vitest";
import { femNodeId } from "../../../src/engine/forces/fem/build";
import { loadModel } from "../../../src/engine/index";
import { femBlockOverFloor } from "../../support/models";

const G = 9.81;
const RHO = 500;
const E = 1e7;
const L = 0.2;
const GAP = 1e-6;

describe("a fem block reaching the floor from rest makes no energy and comes to rest on it", () => {
  it("moreau-jean (θ = ½), h = 20 ms: released 1e-6 m above the floor, 3 s", () => {
    const sim = loadModel(
      femBlockOverFloor({ size: L, bottom: GAP, density: RHO, youngModulus: E, dt: 0.02 }),
    );
    const s = sim.system;
    const nodes = Array.from({ length: 27 }, (_, k) => s.index.get(femNodeId("b", k)) as number);
    const mass = RHO * L ** 3;
    // Resting on the frictionless floor the block is in uniaxial stress σ_zz = −ρ g (L − z)
    // (its sides free), ε_zz = σ_zz/E: its centre sinks by the mean of u(z) = ρ g (L z −
    // z²/2)/E, ρ g L²/(3E) = 6.5e-6 m (linear elasticity; the strains are 1e-4)
    const sag = (RHO * G * L * L) / (3 * E);
    // the most the landing can take out: the potential energy it releases, m g (gap + sag)
    const released = mass * G * (GAP + sag);
    let previous = sim.state().energy.total;
    for (let k = 0; k < 150; k++) {
      sim.step(1);
      const e = sim.state().energy;
      // nothing makes energy: the total never rises (5e-8 J at most, measured: the
      // contact solve's tolerance on the resting contacts), the balance closes within what
      // the inelastic landing may dissipate (−1.4e-4 J, measured)
      expect(e.total, `step ${k + 1}`).toBeLessThanOrEqual(previous + 1e-6);
      expect(Math.abs(e.error), `step ${k + 1}`).toBeLessThan(released);
      previous = e.total;
    }
    // at rest, sunk by its own weight's compression (6.15e-6 m on these 2 × 2 × 2 cells,
    // measured): what rings on (θ = ½ damps nothing after the landing step) a hundredth of
    // the elastic energy its weight stores, m g·sag/2 = 1.3e-4 J
    expect(sim.state().energy.kinetic).toBeLessThan(0.01 * 0.5 * mass * G * sag);
    let zc = 0;
    for (const n of nodes) zc += (s.mass[n] * s.pos[3 * n + 2]) / mass;
    expect(Math.abs(zc - (L / 2 - sag))).toBeLessThan(0.3 * sag);
  }, 60_000);

  for (const dt of [0.005, 0.02])
    it(`moreau-jean (θ = ½), h = ${dt * 1000} ms: released at rest 5 cm above the floor (5 × contact.margin), it lands at √(2 g H) and never goes through`, () => {
      // Detected at rest the bottom nodes' contacts are beyond the margin (0.01 m) and not
      // found; as the block falls, the detection's margin grows with the speed (2 h |v|)
      // and the closing band takes the step that reaches the floor. The free fall is the
      // trapezoidal rule's, exact under constant gravity: at the start of every step before
      // the landing v = −g t and the bottom's height z = H − ½ g t², so the speed it lands
      // at, √(v² + 2 g z), is √(2 g H) to rounding, and the first contact step is the one
      // holding t* = √(2 H/g) (21 at 5 ms, 6 at 20 ms), or the one before it, whose
      // h² a_n already closes it.
      const H = 0.05;
      const sim = loadModel(
        femBlockOverFloor({ size: L, bottom: H, density: RHO, youngModulus: E, dt }),
      );
      const s = sim.system;
      const nodes = Array.from({ length: 27 }, (_, k) => s.index.get(femNodeId("b", k)) as number);
      const mass = RHO * L ** 3;
      const tStar = Math.sqrt((2 * H) / G);
      let first = -1;
      let landing = 0;
      let least = Number.POSITIVE_INFINITY;
      for (let k = 0; k < Math.round(1 / dt); k++) {
        let v = 0;
        let bottom = Number.POSITIVE_INFINITY;
        for (const n of nodes) {
          v += (s.mass[n] * s.vel[3 * n + 2]) / mass;
          bottom = Math.min(bottom, s.pos[3 * n + 2]);
        }
        sim.step(1);
        for (const n of nodes) least = Math.min(least, s.pos[3 * n + 2]);
        if (first < 0 && sim.state().contacts.length > 0) {
          first = k + 1;
          expect(v / (-G * k * dt) - 1).toBeCloseTo(0, 12);
          landing = Math.sqrt(v * v + 2 * G * bottom);
        }
      }
      const kStar = Math.ceil(tStar / dt);
      expect(first === kStar || first === kStar - 1, `first contact step ${first}`).toBe(true);
      expect(landing / Math.sqrt(2 * G * H) - 1).toBeCloseTo(0, 12);
      // never below the floor beyond the projection's tolerance (5e-5 m; measured −3.7e-10
      // and −9.4e-8 m)
      expect(least).toBeGreaterThan(-5e-5);
    });
});
