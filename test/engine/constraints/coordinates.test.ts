/**
 * Joint coordinates and rates in State (joints[i].coordinates, .rates): the slider-crank
 * example (crank r = 0.1 m driven at φ = 2π t, rod L = 0.3 m, slider on a prismatic guide
 * along x) against its closed form, at every step for two turns:
 *   crank angle φ (wrapped to (−π, π]), rate 2π;
 *   slider x(φ) = r sin φ + √(L² − r² cos² φ), offset s = x(φ) − x(0),
 *   ṡ = φ̇ (r cos φ + r² sin φ cos φ / √(L² − r² cos² φ)).
 * Joints without a free coordinate (spherical) and motors report none.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const r = 0.1;
const L = 0.3;
const rate = 2 * Math.PI;
const x = (phi: number) => r * Math.sin(phi) + Math.sqrt(L * L - r * r * Math.cos(phi) ** 2);
const xdot = (phi: number) =>
  rate *
  (r * Math.cos(phi) +
    (r * r * Math.sin(phi) * Math.cos(phi)) / Math.sqrt(L * L - r * r * Math.cos(phi) ** 2));

describe("joint coordinates and rates", () => {
  it("slider-crank: crank angle and rate, slider offset and rate, every step for two turns", () => {
    const model = JSON.parse(
      readFileSync(new URL("../../../examples/slider-crank.json", import.meta.url), "utf8"),
    );
    const sim = loadModel(model);
    const h = sim.solver.dt;
    let worst = 0;
    for (let n = 1; n <= Math.round(2 / h); n++) {
      sim.step(1);
      const t = n * h;
      const phi = rate * t;
      const joints = Object.fromEntries(sim.state().joints.map((j) => [j.id, j]));
      const crank = joints["main-bearing"];
      const guide = joints.guide;
      const wrapped = Math.atan2(Math.sin(phi), Math.cos(phi));
      const dPhi = Math.atan2(
        Math.sin(crank.coordinates[0] - wrapped),
        Math.cos(crank.coordinates[0] - wrapped),
      );
      worst = Math.max(
        worst,
        Math.abs(dPhi),
        Math.abs(crank.rates[0] - rate),
        Math.abs(guide.coordinates[0] - (x(phi) - x(0))),
        Math.abs(guide.rates[0] - xdot(phi)),
      );
      expect(joints["crank-pin"].coordinates).toEqual([]);
      expect(joints.drive.coordinates).toEqual([]);
    }
    expect(worst).toBeLessThan(1e-9);
  });

  it("double pendulum: the elbow's angle and rate are the links' relative rotation about y", () => {
    const model = JSON.parse(
      readFileSync(new URL("../../../examples/double-pendulum.json", import.meta.url), "utf8"),
    );
    const sim = loadModel(model);
    // both links turn about y only: θ = 2 atan2(q_y, q_w) of their orientations
    const about = (q: number[]) => 2 * Math.atan2(q[2], q[0]);
    const wrap = (a: number) => Math.atan2(Math.sin(a), Math.cos(a));
    const s0 = sim.state();
    const [u0, l0] = s0.bodies.map((b) => about(b.orientation));
    let worst = 0;
    for (let n = 0; n < 2000; n++) {
      sim.step(1);
      const s = sim.state();
      const [upper, lower] = s.bodies;
      const shoulder = s.joints[0];
      const elbow = s.joints[1];
      worst = Math.max(
        worst,
        Math.abs(wrap(shoulder.coordinates[0] - (about(upper.orientation) - u0))),
        Math.abs(
          wrap(
            elbow.coordinates[0] -
              (about(lower.orientation) - l0 - (about(upper.orientation) - u0)),
          ),
        ),
        Math.abs(shoulder.rates[0] - upper.angularVelocity[1]),
        Math.abs(elbow.rates[0] - (lower.angularVelocity[1] - upper.angularVelocity[1])),
      );
    }
    expect(worst).toBeLessThan(1e-9);
  });
});
