/**
 * A toggle held near its singular (straight) configuration keeps the large reactions its
 * load asks (ProjectionWorkspace.minimumNorm drops a near self-stress's share only where
 * the velocity term asks it, as the parallelogram's at its flat passes).
 *
 * Two uniform rods (mass m, length L) hang from ground pins 2 L cos φ apart and are pinned
 * to each other in the middle, which sags by L sin φ; all axes along y, gravity −z, at
 * rest. By symmetry the middle pin carries no vertical force, and rod a's moments about
 * its ground pin, m g (L/2) cos φ = H L sin φ, give the horizontal pull
 *   H = m g cos φ / (2 sin φ)     (4.9e4 N for m = 1 kg at φ = 1e-4),
 * so the reactions (on each joint's body b) are: middle (−H, 0, 0) on rod b, left
 * (−H, 0, m g) on rod a, right (H, 0, m g) on rod b. At φ = 1e-4 the rows' pivot is within
 * the near self-stresses' band (d_k ≤ 1e-6 s_kk); dropping every near share there, as a
 * version of this fix did, reported 2.1 N for the middle's 4.9e4 N.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { axisAngle } from "../../support/quat";

const m = 1;
const L = 1;
const g = 9.81;

function toggle(integrator: string, phi: number) {
  const c = Math.cos(phi);
  const s = Math.sin(phi);
  const I = (m * L * L) / 12;
  return {
    name: "toggle",
    gravity: [0, 0, -g],
    bodies: [
      {
        id: "a",
        kind: "rigid",
        mass: m,
        position: [(L / 2) * c, 0, (-L / 2) * s],
        orientation: axisAngle([0, 1, 0], phi),
        inertia: [1e-3, I, I],
      },
      {
        id: "b",
        kind: "rigid",
        mass: m,
        position: [1.5 * L * c, 0, (-L / 2) * s],
        orientation: axisAngle([0, 1, 0], -phi),
        inertia: [1e-3, I, I],
      },
    ],
    joints: [
      {
        id: "left",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "a", point: [-L / 2, 0, 0] },
        axis: [0, 1, 0],
      },
      {
        id: "middle",
        type: "revolute",
        a: { body: "a", point: [L / 2, 0, 0] },
        b: { body: "b", point: [-L / 2, 0, 0] },
        axis: [0, 1, 0],
      },
      {
        id: "right",
        type: "revolute",
        a: { body: "ground", point: [2 * L * c, 0, 0] },
        b: { body: "b", point: [L / 2, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    solver: { integrator, dt: 1e-3 },
  };
}

describe("a toggle near straight reports the reactions its load asks", () => {
  for (const integrator of ["moreau-jean", "generalized-alpha", "newmark", "backward-euler"])
    for (const phi of [1e-2, 1e-4])
      it(`${integrator}, φ = ${phi}: H = m g cos φ / (2 sin φ) at each pin, to 1e-7 of it`, () => {
        const sim = loadModel(toggle(integrator, phi));
        sim.step(10);
        const H = (m * g * Math.cos(phi)) / (2 * Math.sin(phi));
        const expected: Record<string, number[]> = {
          left: [-H, 0, m * g],
          middle: [-H, 0, 0],
          right: [H, 0, m * g],
        };
        for (const j of sim.state().joints)
          for (let i = 0; i < 3; i++)
            expect(Math.abs(j.force[i] - expected[j.id][i])).toBeLessThan(1e-7 * H);
      });
});
