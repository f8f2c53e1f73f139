/**
 * Symplectic Euler's explicit forces checked against its stability bound
 * (theta-scheme.ts, explicitHalvings; ForceEffector.addExplicitRates): a step whose stiffest
 * mode it would not resolve, h² ω² ≥ 4, is taken in the halvings the bound asks.
 *
 * A bar of E = 1 MPa, ρ = 1000 kg/m³, ν = 0 (5 × 5 cm, 1 m long in 20 cells), hanging from
 * its fixed top face, released unstretched under gravity at the default h = 5 ms: its
 * highest mode has ω ≈ 2.35e3 rad/s (measured: the step alone is stable at h = 0.8 ms, not
 * at 0.9 ms), h ω ≈ 12. Before, the run diverged at its 6th step. Now it oscillates about
 * the closed-form static extension ρ g L²/(2E) (a uniform bar under its own weight; ν = 0:
 * no lateral contraction) with the fundamental period of a fixed-free bar, 4 L/c,
 * c = √(E/ρ). One 100 times stiffer is stepped by backward Euler at the last halving and
 * settles there. And a bar hung by attachments from a pinned hub, whose joints' error
 * control alone halved its steps too late (34 J gained in 0.3 s, unflagged but for
 * stepToleranceMet), keeps its energy balance.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { springParticle } from "../../support/models";

const E = 1e6;
const rho = 1000;
const L = 1;
const g = 9.81;
const h = 0.005;

function hangingBar(integrator: string, youngModulus = E) {
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [{ id: "ceiling", fixed: true }],
    fem: [
      {
        id: "bar",
        box: { size: [0.05, 0.05, L], resolution: [1, 1, 20], center: [0, 0, -L / 2] },
        density: rho,
        youngModulus,
        poissonRatio: 0,
        fixedFaces: ["+z"],
      },
    ],
    solver: { integrator, dt: h },
  } as never);
}

/** The bar's lowest node's height below its rest (m, negative down). */
function tip(sim: ReturnType<typeof loadModel>): number {
  const p = sim.state().fem?.[0].positions ?? [];
  let z = 0;
  for (let k = 2; k < p.length; k += 3) z = Math.min(z, p[k]);
  return z + L;
}

describe("symplectic Euler on a fem bar beyond its explicit stability limit", () => {
  it("takes the sub-steps the elements ask and vibrates about ρgL²/(2E) at the period 4L/c", () => {
    const sim = hangingBar("symplectic-euler");
    const stat = -(rho * g * L * L) / (2 * E); // −4.905e-3 m
    const period = (4 * L) / Math.sqrt(E / rho); // 0.1265 s
    const z: number[] = [];
    let worstError = 0;
    const substeps = new Set<number>();
    for (let n = 0; n < 400; n++) {
      sim.step(1);
      const s = sim.state();
      substeps.add(s.solver.substeps);
      worstError = Math.max(worstError, Math.abs(s.energy.error as number));
      z.push(tip(sim));
    }
    // h/4 = 1.25 ms is beyond the step's measured limit (0.8–0.9 ms): 8 sub-steps
    expect([...substeps]).toEqual([8]);
    // upward crossings of the static extension: whole periods
    const crossings: number[] = [];
    for (let n = 1; n < z.length; n++)
      if (z[n - 1] < stat && z[n] >= stat)
        crossings.push((n - 1 + (stat - z[n - 1]) / (z[n] - z[n - 1])) * h + h);
    const first = crossings[0];
    const last = crossings[crossings.length - 1];
    const periods = crossings.length - 1;
    expect(periods).toBeGreaterThanOrEqual(14);
    // (measured 0.05 % long: the mesh and the step)
    expect(Math.abs((last - first) / periods / period - 1)).toBeLessThan(0.002);
    // the mean over those whole periods: the static extension
    let sum = 0;
    let count = 0;
    for (let n = Math.ceil(first / h); n < Math.floor(last / h); n++) {
      sum += z[n - 1];
      count++;
    }
    expect(Math.abs(sum / count / stat - 1)).toBeLessThan(1e-3);
    // released from rest: it swings to twice the static extension and back
    expect(Math.abs(Math.min(...z) / (2 * stat) - 1)).toBeLessThan(0.01);
    expect(Math.max(...z)).toBeLessThan(1e-4);
    // the energy balance holds to a fraction of the work gravity does, m g δ ≈ 0.12 J
    expect(worstError).toBeLessThan(2e-3);
  });

  it("a bar 100 times stiffer, beyond the last halving, is stepped by backward Euler at h/16 and settles at ρgL²/(2E)", () => {
    const stiff = 1e8;
    const sim = hangingBar("symplectic-euler", stiff);
    const substeps = new Set<number>();
    for (let n = 0; n < 100; n++) {
      sim.step(1);
      substeps.add(sim.state().solver.substeps);
    }
    expect([...substeps]).toEqual([16]);
    // backward Euler's damping (h/16 ω₁ = 0.16 for the fundamental) has settled it
    expect(Math.abs(tip(sim) / (-(rho * g * L * L) / (2 * stiff)) - 1)).toBeLessThan(1e-3);
  });

  it("a bar hung by attachments from a hub pinned to the ground keeps its energy balance", () => {
    // 0.5 m in 10 cells of 5 cm, ν = 0.3 (bound 4.0e3 rad/s: h/16 is stable), its top nodes
    // attached to a 1 kg hub on a spherical joint. Before, the first steps (whole, then
    // halved by the joints' error control alone) gained 6 J by the 2nd step and 33 J by the
    // 6th, the last halvings reporting stepToleranceMet false
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [{ id: "hub", mass: 1, inertia: [0.01, 0.01, 0.01], position: [0, 0, 0.02] }],
      fem: [
        {
          id: "bar",
          box: { size: [0.05, 0.05, 0.5], resolution: [1, 1, 10], center: [0, 0, -0.25] },
          density: rho,
          youngModulus: E,
          poissonRatio: 0.3,
          attachments: [0, 1, 2, 3].map((node) => ({ node, body: "hub" })),
        },
      ],
      joints: [
        {
          id: "pin",
          type: "spherical",
          a: { body: "ground", point: [0, 0, 0.02] },
          b: { body: "hub", point: [0, 0, 0] },
        },
      ],
      solver: { integrator: "symplectic-euler", dt: h },
    } as never);
    // the work gravity does on the bar settling, m g δ ≈ 1.2e-3 J, bounds what is at stake
    let worst = 0;
    const substeps = new Set<number>();
    let coarse = 0;
    for (let n = 0; n < 60; n++) {
      sim.step(1);
      const s = sim.state();
      substeps.add(s.solver.substeps);
      if (!s.solver.stepToleranceMet) coarse++;
      worst = Math.max(worst, Math.abs(s.energy.error as number));
    }
    // measured 7e-5 J
    expect(worst).toBeLessThan(2e-4);
    expect(coarse).toBe(0);
    expect([...substeps]).toEqual([16]);
  });
});

describe("symplectic Euler on a stiff particle spring", () => {
  it("steps h ω = 3 in the two halves its bound asks, keeping their modified energy exactly", () => {
    // x'' = −ω² x, ω = 600 rad/s (k = 3.6e5 N/m, m = 1 kg) at h = 5 ms: h ω = 3, beyond 2
    // (before, the run diverged at its 10th step); one spring to a fixed point, its bound
    // k/m is exact: h/2 (h ω/2 = 1.5). Symplectic Euler at step τ keeps
    // I = v² + ω² x² − τ ω² x v exactly, here with τ = h/2 after every step
    const w = 600;
    const sim = loadModel(
      springParticle({ stiffness: w * w, mass: 1, x0: 0.01, v0: 2, dt: h, name: null }),
    );
    const tau = h / 2;
    const inv = () => {
      const b = sim.state().bodies[0];
      const x = b.position[0];
      const v = b.velocity[0];
      return v * v + w * w * x * x - tau * w * w * x * v;
    };
    const i0 = inv();
    let drift = 0;
    const substeps = new Set<number>();
    for (let n = 0; n < 2000; n++) {
      sim.step(1);
      substeps.add(sim.state().solver.substeps);
      drift = Math.max(drift, Math.abs(inv() / i0 - 1));
    }
    expect([...substeps]).toEqual([2]);
    expect(drift).toBeLessThan(1e-10);
  });
});
