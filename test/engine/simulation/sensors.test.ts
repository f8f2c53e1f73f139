/**
 * Sensors: the observation vector's layout and values against independent numbers. A
 * ball falling freely (Moreau–Jean θ = ½ integrates constant gravity exactly):
 * time t, position z₀ − g t²/2, velocity −g t, acceleration (v_t − v_{t−h})/h = −g,
 * orientation [1, 0, 0, 0], angular velocity 0; a box resting on the floor: the contact
 * force on it from the floor sums to m g up (and the reverse pair to −m g); before any
 * step the acceleration reads 0.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const g = 9.81;

describe("sensors", () => {
  it("time, body position, velocity, acceleration, orientation, angular velocity of a falling ball", () => {
    const sim = loadModel({
      bodies: [
        { id: "ball", mass: 2, position: [0, 0, 10], shapes: [{ type: "sphere", radius: 0.1 }] },
      ],
      sensors: [
        { id: "t", type: "time" },
        { id: "x", type: "bodyPosition", body: "ball" },
        { id: "v", type: "bodyVelocity", body: "ball" },
        { id: "a", type: "bodyAcceleration", body: "ball" },
        { id: "q", type: "bodyOrientation", body: "ball" },
        { id: "w", type: "bodyAngularVelocity", body: "ball" },
      ],
      solver: { dt: 0.01 },
    });
    expect(sim.state().observation).toEqual([0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    sim.step(50);
    const t = 0.5;
    const o = sim.state().observation;
    expect(o).toHaveLength(17);
    expect(o[0]).toBeCloseTo(t, 12);
    expect(o[3]).toBeCloseTo(10 - (g * t * t) / 2, 10);
    expect(o[6]).toBeCloseTo(-g * t, 10);
    expect(o[9]).toBeCloseTo(-g, 9);
    expect(o.slice(10, 14)).toEqual([1, 0, 0, 0]);
    expect(o.slice(14)).toEqual([0, 0, 0]);
  });

  it("contact force between two named bodies: m g on the box from the floor, −m g the other way round", () => {
    const m = 3;
    const sim = loadModel({
      bodies: [
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
        {
          id: "box",
          mass: m,
          position: [0, 0, 0.1],
          shapes: [{ type: "box", halfExtents: [0.2, 0.2, 0.1] }],
        },
      ],
      contact: { method: "nsc", friction: 0.5 },
      sensors: [
        { id: "up", type: "contactForce", bodies: ["floor", "box"] },
        { id: "down", type: "contactForce", bodies: ["box", "floor"] },
      ],
    });
    sim.step(200);
    const o = sim.state().observation;
    expect(o[2]).toBeCloseTo(m * g, 8);
    expect(o[5]).toBeCloseTo(-m * g, 8);
    expect(Math.abs(o[0]) + Math.abs(o[1])).toBeLessThan(1e-9);
  });
});
