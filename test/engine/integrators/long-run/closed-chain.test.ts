/**
 * A closed chain of ten links, 40 s at the default step (5 ms): ten thin rods (1 kg, 1 m)
 * hinged end to end about y, the first to the ground at the origin and the last to the
 * ground 10 sin(0.5) m away at the same height: a hanging loop of seven degrees of freedom
 * (a "V" released at rest, the first five links at 0.5 rad from the downward vertical, the
 * others mirrored), which swings chaotically. No friction, damping or drive: the energy,
 * computed here from the body states, must keep its start value, and the joints must hold.
 * Measured over 40 s: |ΔE| within 1.6e-3 of the largest kinetic energy (9.7 J) under
 * moreau-jean and generalized-alpha (the same steps), 1.4e-2 under symplectic Euler (first
 * order; bounded, not drifting); the loop closes to 2e-14 m. Newmark at its defaults now
 * takes generalized-alpha's steps (newmark.ts `alphaForm`); with its velocity-level joints
 * its error grew, from 1.7e-3 in the first 10 s to 8.4e-3 by 40 s and 1.2e-2 by 60 s.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { axisAngle, mechanicalEnergy, report } from "./helpers";
import { G } from "./models";

const LINKS = 10;
const m = 1;
const L = 1;
const Ic = (m * L * L) / 12;
const opening = 0.5;

function chain(integrator: string) {
  const bodies: Record<string, unknown>[] = [];
  const joints: Record<string, unknown>[] = [];
  let end = [0, 0, 0];
  for (let i = 0; i < LINKS; i++) {
    // angle from the downward vertical: down-right, then up-right; the rod along its body x,
    // pointing along (sin θ, 0, −cos θ) when turned by π/2 − θ about y
    const theta = i < LINKS / 2 ? opening : Math.PI - opening;
    const d = [Math.sin(theta), 0, -Math.cos(theta)];
    bodies.push({
      id: `l${i}`,
      mass: m,
      inertia: [1e-4, Ic, Ic],
      position: [end[0] + (L / 2) * d[0], 0, end[2] + (L / 2) * d[2]],
      orientation: axisAngle([0, 1, 0], Math.PI / 2 - theta),
    });
    joints.push({
      id: `j${i}`,
      type: "revolute",
      a:
        i === 0
          ? { body: "ground", point: [0, 0, 0] }
          : { body: `l${i - 1}`, point: [L / 2, 0, 0] },
      b: { body: `l${i}`, point: [-L / 2, 0, 0] },
      axis: [0, 1, 0],
    });
    end = [end[0] + L * d[0], 0, end[2] + L * d[2]];
  }
  joints.push({
    id: "close",
    type: "revolute",
    a: { body: `l${LINKS - 1}`, point: [L / 2, 0, 0] },
    b: { body: "ground", point: end },
    axis: [0, 1, 0],
  });
  return { gravity: [0, 0, -G], bodies, joints, solver: { integrator } };
}

const props = Object.fromEntries(
  Array.from({ length: LINKS }, (_, i) => [`l${i}`, { mass: m, inertia: [1e-4, Ic, Ic] }]),
);

describe("a closed chain of ten links swinging for 40 s at the default step keeps its energy", () => {
  for (const [integrator, bound] of [
    ["moreau-jean", 3e-3],
    ["generalized-alpha", 3e-3],
    ["newmark", 3e-3],
    ["symplectic-euler", 0.04],
  ] as const)
    it(`${integrator}: |E − E0| ≤ ${bound} of the largest kinetic energy, the loop closed`, () => {
      const sim = loadModel(chain(integrator));
      expect(sim.solver.dt).toBe(0.005);
      const E0 = mechanicalEnergy(sim.state().bodies, props, G).total;
      let drift = 0;
      let kineticMax = 0;
      let gap = 0;
      const steps = Math.round(40 / sim.solver.dt);
      for (let k = 1; k <= steps; k++) {
        sim.step(1);
        const s = sim.state();
        const e = mechanicalEnergy(s.bodies, props, G);
        kineticMax = Math.max(kineticMax, e.kinetic);
        drift = Math.max(drift, Math.abs(e.total - E0));
        // the last link's far end on its ground pin, 10 sin(0.5) m out at height 0
        const last = s.bodies[LINKS - 1];
        const [w, x, y, z] = last.orientation;
        const ex = [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)];
        gap = Math.max(
          gap,
          Math.hypot(
            last.position[0] + (L / 2) * ex[0] - LINKS * Math.sin(opening),
            last.position[1] + (L / 2) * ex[1],
            last.position[2] + (L / 2) * ex[2],
          ),
        );
      }
      report(`closed chain ${integrator}`, {
        drift,
        kineticMax,
        relative: drift / kineticMax,
        gap,
      });
      expect(kineticMax).toBeGreaterThan(5);
      expect(drift / kineticMax).toBeLessThan(bound);
      expect(gap).toBeLessThan(1e-6);
    });
});
