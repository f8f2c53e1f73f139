/** potentialEnergy: the sum of the effectors' stored energies. */
import { describe, expect, it } from "vitest";
import { potentialEnergy } from "../../../src/engine/forces/energy";
import { GravityEffector } from "../../../src/engine/forces/gravity";
import { PointForceEffector } from "../../../src/engine/forces/point-force";
import { particle, system } from "./jacobian-check";

describe("potentialEnergy helper", () => {
  it("sums the effectors' energies", () => {
    const sys = system(particle("p", 2, [0, 0, 1]));
    const g = new GravityEffector(sys, [0, 0, -10]);
    const pf = new PointForceEffector(sys, { id: "pf", body: 0, force: [0, 0, 5] });
    pf.applyForces(0);
    expect(potentialEnergy([g, pf])).toBeCloseTo(20 - 5, 14);
    expect(potentialEnergy([])).toBe(0);
  });
});
