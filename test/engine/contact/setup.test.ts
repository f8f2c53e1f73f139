/**
 * From a model to the collision layer (setup.ts), on a small model built here: the shape
 * instances (body index, local pose, in model order), body ids for contact ("ground" is
 * −1), the jointed pairs that do not collide unless contact.collideJointed (so the
 * detector reports no contact between them), the bounding radii about the centres of mass
 * (closed forms per shape: sphere c + r, box c + |h|, capsule L + r, cylinder √(L² + r²)),
 * and the per-pair restitution and friction in either order of the ids; a pair naming fem
 * bodies covers all their nodes, one naming a node wins over it.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import {
  boundingRadii,
  contactBodyIndex,
  createDetector,
  jointedPairs,
  PairParameters,
  shapeInstances,
} from "../../../src/engine/contact/setup";
import { ContactBuffer } from "../../../src/engine/geometry/contact-buffer";
import { modelSystem } from "../../support/system";

/** A floor, two overlapping spheres on it joined by a distance link, and a compound body. */
function model(collideJointed: boolean): ModelInput {
  return {
    gravity: [0, 0, 0],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      { id: "s1", mass: 1, position: [0, 0, 0.09], shapes: [{ type: "sphere", radius: 0.1 }] },
      { id: "s2", mass: 1, position: [0.15, 0, 0.09], shapes: [{ type: "sphere", radius: 0.1 }] },
      {
        id: "c",
        mass: 1,
        position: [5, 5, 5],
        shapes: [
          { type: "sphere", radius: 0.1, position: [0.3, 0.4, 0] },
          { type: "box", halfExtents: [0.1, 0.2, 0.2] },
          { type: "capsule", radius: 0.1, halfLength: 0.5 },
          { type: "cylinder", radius: 0.3, halfLength: 0.4 },
        ],
      },
    ],
    joints: [
      { id: "link", type: "distance", a: { body: "s1", point: [0, 0, 0] }, b: { body: "s2" } },
    ],
    contact: { method: "nsc", margin: 0.02, collideJointed, restitution: 0.5, friction: 0.2 },
  } as ModelInput;
}

describe("contact setup", () => {
  it("shape instances in model order with their bodies and local poses; body ids", () => {
    const { system, spec } = modelSystem(model(false));
    const shapes = shapeInstances(spec, system);
    expect(shapes.map((s) => [s.shape.type, s.body])).toEqual([
      ["plane", 0],
      ["sphere", 1],
      ["sphere", 2],
      ["sphere", 3],
      ["box", 3],
      ["capsule", 3],
      ["cylinder", 3],
    ]);
    expect(shapes[3].localPosition).toEqual([0.3, 0.4, 0]);
    expect(contactBodyIndex(system, "ground")).toBe(-1);
    expect(contactBodyIndex(system, "s2")).toBe(2);
    expect(() => contactBodyIndex(system, "nope")).toThrow(/contact: unknown body "nope"/);
  });

  it("bounding radii: the largest c + extent of a body's shapes (planes count 0)", () => {
    const { system, spec } = modelSystem(model(false));
    const rho = boundingRadii(shapeInstances(spec, system), system.numBodies);
    expect(rho[0]).toBe(0);
    expect(rho[1]).toBe(0.1);
    // compound: sphere 0.5 + 0.1, box |(0.1, 0.2, 0.2)| = 0.3, capsule 0.6, cylinder 0.5
    expect(rho[3]).toBeCloseTo(0.6, 15);
    const one = (shape: ReturnType<typeof shapeInstances>[number]["shape"]) =>
      boundingRadii([{ shape, body: 0 }], 1)[0];
    expect(one({ type: "box", halfExtents: [0.1, 0.2, 0.2] })).toBeCloseTo(0.3, 15);
    expect(one({ type: "cylinder", radius: 0.3, halfLength: 0.4 })).toBeCloseTo(0.5, 15);
  });

  it("jointed bodies are excluded from detection unless collideJointed", () => {
    for (const collideJointed of [false, true]) {
      const { system, spec } = modelSystem(model(collideJointed));
      expect(jointedPairs(spec, system)).toEqual(collideJointed ? [] : [[1, 2]]);
      const detector = createDetector(spec, system);
      expect(detector.margin).toBe(0.02);
      const buf = new ContactBuffer();
      detector.detect(system.pos, system.quat, buf);
      const pairs = new Set<string>();
      for (let i = 0; i < buf.count; i++) pairs.add(`${buf.bodyA[i]}-${buf.bodyB[i]}`);
      // both spheres sink 1 cm into the floor; they overlap each other by 5 cm
      expect(pairs.has("0-1") && pairs.has("0-2")).toBe(true);
      expect(pairs.has("1-2")).toBe(collideJointed);
    }
  });

  it("pair parameters: overrides in either order of the ids, defaults elsewhere", () => {
    const { system } = modelSystem(model(false));
    const p = new PairParameters(system, {
      restitution: 0.5,
      friction: 0.2,
      pairs: [
        { bodies: ["ground", "s1"], restitution: 0.9 },
        { bodies: ["s2", "s1"], friction: 0.7 },
      ],
    });
    expect([p.restitutionOf(-1, 1), p.restitutionOf(1, -1), p.restitutionOf(0, 1)]).toEqual([
      0.9, 0.9, 0.5,
    ]);
    expect([p.frictionOf(1, 2), p.frictionOf(2, 1), p.frictionOf(-1, 1)]).toEqual([0.7, 0.7, 0.2]);
    expect(p.anyFriction()).toBe(true);
    p.set({ friction: 0, pairs: [] });
    expect(p.anyFriction()).toBe(false);
    expect(p.restitutionOf(-1, 1)).toBe(0.5);
    p.set({ pairs: [{ bodies: ["floor", "s2"], friction: 0.4 }] });
    expect(p.anyFriction()).toBe(true);
    expect(p.frictionOf(2, 0)).toBe(0.4);
    expect(() => p.set({ pairs: [{ bodies: ["x", "s2"], friction: 1 }] })).toThrow(
      /unknown body "x"/,
    );
  });

  it("pair parameters naming fem bodies: every node pair, a node's own pair first", () => {
    const box = (z: number) => ({
      size: [0.1, 0.1, 0.1],
      resolution: [1, 1, 1],
      center: [0, 0, z],
    });
    const { system } = modelSystem({
      gravity: [0, 0, 0],
      bodies: [{ id: "floor", fixed: true, shapes: [] }],
      fem: [
        { id: "a", box: box(0.05), density: 1000, youngModulus: 1e5 },
        { id: "b", box: box(0.2), density: 1000, youngModulus: 1e5 },
      ],
    } as unknown as ModelInput);
    const at = (id: string) => contactBodyIndex(system, id);
    const p = new PairParameters(system, {
      restitution: 0,
      friction: 0.2,
      pairs: [
        { bodies: ["b", "a"], friction: 0.7 },
        { bodies: ["a/0", "b/1"], friction: 0.1 },
        { bodies: ["a", "floor"], friction: 0.4 },
        { bodies: ["floor", "b/3"], friction: 0.9 },
      ],
    });
    // every node of a with every node of b (8 × 8), either order
    for (let i = 0; i < 8; i++)
      for (let j = 0; j < 8; j++) {
        const want = i === 0 && j === 1 ? 0.1 : 0.7;
        expect(p.frictionOf(at(`a/${i}`), at(`b/${j}`))).toBe(want);
        expect(p.frictionOf(at(`b/${j}`), at(`a/${i}`))).toBe(want);
      }
    expect(p.frictionOf(at("a/5"), at("floor"))).toBe(0.4);
    expect(p.frictionOf(at("floor"), at("b/3"))).toBe(0.9);
    expect(p.frictionOf(at("floor"), at("b/2"))).toBe(0.2);
    expect(p.frictionOf(at("a/1"), at("a/2"))).toBe(0.2);
    expect(() => p.set({ pairs: [{ bodies: ["c", "a"], friction: 1 }] })).toThrow(
      /unknown body "c"/,
    );
  });
});
