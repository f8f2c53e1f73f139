/**
 * A planar four-bar built only from revolute joints has redundant constraint rows in 3-D
 * (the loop closes in the plane twice over). Time integration must still work: the
 * constraint solve is regularized (constrained-solve.ts) and the projection drops the
 * dependent rows, so every integrator steps it with the loop closed and the motion planar.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { bodyPoint } from "../../support/quat";

type St = ReturnType<ReturnType<typeof loadModel>["state"]>;

const base = JSON.parse(
  readFileSync(new URL("../../../examples/four-bar.json", import.meta.url), "utf8"),
);
const allRevolute = {
  ...base,
  joints: base.joints.map((j: Record<string, unknown>) => ({
    ...j,
    type: "revolute",
    axis: [0, 1, 0],
  })),
};

function worldPoint(st: St, id: string, p: number[]): number[] {
  return id === "ground" ? p : bodyPoint(st.bodies.find((x) => x.id === id)!, p);
}

describe("closed loop of revolute joints (redundant rows)", () => {
  for (const integrator of ["newmark", "backward-euler", "moreau-jean", "symplectic-euler"])
    it(`${integrator}: steps with the loop closed and the motion planar`, () => {
      const sim = loadModel({ ...allRevolute, solver: { ...allRevolute.solver, integrator } });
      let gap = 0;
      let outOfPlane = 0;
      for (let n = 0; n < 500; n++) {
        sim.step(1);
        const st = sim.state();
        for (const j of allRevolute.joints) {
          const a = worldPoint(st, j.a.body, j.a.point);
          const b = worldPoint(st, j.b.body, j.b.point);
          gap = Math.max(gap, Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]));
        }
        for (const b of st.bodies) outOfPlane = Math.max(outOfPlane, Math.abs(b.position[1]));
      }
      expect(gap).toBeLessThan(1e-6);
      expect(outOfPlane).toBeLessThan(1e-6);
      // it moved: gravity swings the linkage
      const st = sim.state();
      expect(Math.hypot(...st.bodies[0].angularVelocity)).toBeGreaterThan(0.1);
    });
});
