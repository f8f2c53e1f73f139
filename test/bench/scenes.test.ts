/**
 * Keeps the comparison's scenes building and stepping (so bench/ cannot rot), without
 * timing anything: every scene of ../shared/BENCH-SCENES.md builds in every engine and
 * runs 3 steps through the protocol runner with a finite state, and the first steps
 * match what can be worked out by hand (free fall of everything that is not yet touching
 * anything, a fixed row that stays put, joints that stay together). The scene
 * descriptions and the accuracy probes are checked against counts and closed forms.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ENGINE_KEYS, engineRunsScene, loadEngine } from "../../bench/compare/engines/index";
import {
  GENERALIZED_ALPHA_VARIANTS,
  toGeneralizedAlphaModel,
  toMoreauModel,
} from "../../bench/compare/engines/moreau";
import { toMjcf } from "../../bench/compare/engines/mujoco";
import { createBodyStates, type EngineAdapter } from "../../bench/compare/engines/types";
import {
  energy,
  jointDrift,
  probeCloth,
  probeSpheres,
  statesFinite,
} from "../../bench/compare/probes";
import { runScene } from "../../bench/compare/protocol";
import {
  buildScene,
  chainScene,
  clothScene,
  SCENE_IDS,
  spheresScene,
} from "../../bench/compare/scene";
import { spheresModel } from "../../bench/scenes";
import { loadModel } from "../../src/engine/index";
import { mulberry32 } from "../support/random";

const g = 9.81;
const h = 1 / 240;

describe("scene descriptions", () => {
  it("S1: layers of 10 × 10 spheres, grid + mulberry32(12345) jitter drawn x then y in order k, j, i", () => {
    const s = spheresScene(1000);
    expect(s.bodies).toHaveLength(1000);
    expect(s.halfSpaces).toHaveLength(5);
    // the tests' own mulberry32 (as published), not the bench's copy under test
    const rand = mulberry32(12345);
    let maxJitter = 0;
    for (let k = 0; k < 10; k++)
      for (let j = 0; j < 10; j++)
        for (let i = 0; i < 10; i++) {
          const b = s.bodies[100 * k + 10 * j + i];
          const jx = 0.002 * (2 * rand() - 1);
          const jy = 0.002 * (2 * rand() - 1);
          const x = Math.max(-0.45, Math.min(0.45, -0.45 + 0.1 * i + jx));
          const y = Math.max(-0.45, Math.min(0.45, -0.45 + 0.1 * j + jy));
          expect(b.position[0]).toBe(x);
          expect(b.position[1]).toBe(y);
          expect(b.position[2]).toBeCloseTo(0.1 + 0.2 * k + 0.1 * ((i + j) % 2), 15);
          maxJitter = Math.max(maxJitter, Math.abs(jx), Math.abs(jy));
          expect(b.mass).toBe(0.1);
          expect(b.inertia[0]).toBeCloseTo((2 / 5) * 0.1 * 0.05 ** 2, 18);
        }
    expect(maxJitter).toBeLessThanOrEqual(0.002);
    expect(maxJitter).toBeGreaterThan(0.0015); // the jitter is really there
    // At t = 0 nothing overlaps; the only touches (gap ≤ 1 mm) are spheres of the outer
    // rows and columns near a wall: |x| or |y| ≥ 0.449, half of them clamped to 0.45 (gap 0).
    const near = (c: number) => (0.45 - Math.abs(c) <= 1e-3 + 1e-12 ? 1 : 0);
    const atWall = s.bodies.reduce((n, b) => n + near(b.position[0]) + near(b.position[1]), 0);
    const clamped = s.bodies.filter(
      (b) => Math.abs(b.position[0]) === 0.45 || Math.abs(b.position[1]) === 0.45,
    ).length;
    expect(clamped).toBeGreaterThan(100);
    expect(atWall).toBeGreaterThan(clamped);
    expect(atWall).toBeLessThan(400); // 10 layers × 4 walls × 10 spheres
    const st = createBodyStates(1000);
    s.bodies.forEach((b, i) => {
      st.pos.set(b.position, 3 * i);
    });
    const p = probeSpheres(s, st);
    expect(p.contacts).toBe(atWall);
    expect(p.maxPenetration).toBeLessThan(1e-12);
    expect(spheresScene(100).bodies).toHaveLength(100);
  });

  it("S2: links end to end along +x, joint anchors coincide at t = 0", () => {
    const s = chainScene(100);
    expect(s.bodies).toHaveLength(100);
    expect(s.joints).toHaveLength(100);
    expect(s.bodies[99].position[0]).toBeCloseTo(9.95, 12);
    const st = createBodyStates(100);
    s.bodies.forEach((b, i) => {
      st.pos.set(b.position, 3 * i);
      st.quat.set(b.orientation, 4 * i);
    });
    expect(jointDrift(s, st)).toBeLessThan(1e-12);
    // box inertia 1/12 m (b² + c²) with the 0.1 × 0.02 × 0.02 m link, to the 4 digits given
    expect(s.bodies[0].inertia[0]).toBeCloseTo((0.1 / 12) * (0.02 ** 2 + 0.02 ** 2), 9);
    expect(s.bodies[0].inertia[1]).toBeCloseTo((0.1 / 12) * (0.1 ** 2 + 0.02 ** 2), 8);
  });

  it("S3: 32 × 32 particles, 1 kg, row y = 0 fixed, 3875 springs", () => {
    const s = clothScene(32);
    expect(s.bodies).toHaveLength(1024);
    expect(s.bodies.filter((b) => b.fixed)).toHaveLength(32);
    expect(s.bodies.every((b) => !b.fixed || b.position[1] === 0)).toBe(true);
    expect(s.bodies.reduce((m, b) => m + b.mass, 0)).toBeCloseTo(1, 12);
    // structural 2·32·31 less the 31 along the fixed row; shear 2·31·31
    const structural = s.springs.filter((sp) => sp.structural);
    expect(structural).toHaveLength(2 * 32 * 31 - 31);
    expect(s.springs).toHaveLength(3875);
    for (const sp of s.springs)
      expect(sp.rest).toBeCloseTo(sp.structural ? 1 / 31 : Math.SQRT2 / 31, 14);
    expect(buildScene("S3-32-stiff").springs[0].stiffness).toBe(1e4);
  });
});

describe("probes", () => {
  it("contacts, mean height and penetration of a hand-made arrangement", () => {
    const s = spheresScene(100);
    const st = createBodyStates(100);
    // sphere 0 on the floor, sphere 1 touching it and the floor, sphere 2 against the
    // wall x = −0.5 and 1 mm into the floor, the others in a column high up, 0.2 m apart
    let high = 0;
    for (let i = 3; i < 100; i++) {
      st.pos.set([0.3, 0.3, 0.5 + 0.2 * (i - 3)], 3 * i);
      high += 0.5 + 0.2 * (i - 3);
    }
    st.pos.set([0, 0, 0.05], 0);
    st.pos.set([0.1, 0, 0.05], 3);
    st.pos.set([-0.45, 0.3, 0.049], 6);
    const p = probeSpheres(s, st);
    expect(p.contacts).toBe(5); // 0–floor, 1–floor, 0–1, 2–floor, 2–wall
    expect(p.maxPenetration).toBeCloseTo(0.001, 12);
    expect(p.meanHeight).toBeCloseTo((0.05 + 0.05 + 0.049 + high) / 100, 12);
    expect(p.escaped).toBe(0);
  });

  it("joint drift and energy of a link turned 90° about y around its pivot", () => {
    const s = chainScene(1);
    const st = createBodyStates(1);
    st.pos.set([0, 0, -0.05]);
    st.quat.set([Math.SQRT1_2, 0, Math.SQRT1_2, 0]); // +90° about y: x → −z
    st.omega.set([0, 2, 0]);
    st.vel.set([-0.1, 0, 0]); // ω × r, r = (0, 0, −0.05)
    expect(jointDrift(s, st)).toBeLessThan(1e-12);
    const expected = 0.5 * 0.1 * 0.01 + 0.5 * 8.667e-5 * 4 + 0.1 * g * -0.05;
    expect(energy(s, st)).toBeCloseTo(expected, 14);
    st.pos.set([0.001, 0, -0.05]); // pivot 1 mm off
    expect(jointDrift(s, st)).toBeCloseTo(0.001, 14);
  });

  it("largest structural strain and lowest z of a stretched cloth", () => {
    const s = clothScene(4);
    const st = createBodyStates(16);
    s.bodies.forEach((b, i) => {
      st.pos.set(b.position, 3 * i);
    });
    // stretch the top row (j = 3) in y by 10 % of a spacing and drop one particle
    for (let i = 0; i < 4; i++) st.pos[3 * (12 + i) + 1] += 0.1 / 3;
    st.pos[3 * 13 + 2] = -0.2;
    const c = probeCloth(s, st);
    const l0 = 1 / 3;
    // particle 13 (i = 1, j = 3) to 9 (i = 1, j = 2): (0, 1.1·l0, −0.2)
    expect(c.maxStrain).toBeCloseTo(Math.hypot(1.1 * l0, 0.2) / l0 - 1, 12);
    expect(c.lowestZ).toBe(-0.2);
  });
});

describe("Moreau models", () => {
  it("bench/scenes spheresModel is S1 with the container's five planes", () => {
    const sim = loadModel(spheresModel(100));
    expect(sim.model.bodies).toHaveLength(101);
    const box = sim.model.bodies[100];
    expect(box.fixed).toBe(true);
    expect(box.shapes.map((sh) => (sh.type === "plane" ? sh.offset : Number.NaN))).toEqual([
      0, -0.5, -0.5, -0.5, -0.5,
    ]);
    expect(sim.model.solver.integrator).toBe("moreau-jean");
    expect(sim.model.contact?.friction).toBe(0.5);
  });

  it("S2 Newmark and the resolved cloth keep the linearized step; the generalized-α rows set only integrator, ρ∞ and dt", () => {
    expect(toMoreauModel(chainScene(100)).solver?.newtonIterations).toBe(1);
    expect(toMoreauModel(clothScene(32)).solver?.newtonIterations).toBe(1);
    expect(toMoreauModel(buildScene("S3-32-stiff")).solver?.newtonIterations).toBe(30);
    for (const v of GENERALIZED_ALPHA_VARIANTS) {
      const model = toGeneralizedAlphaModel(chainScene(10), v.rhoInfinity);
      expect(model.solver).toEqual({
        integrator: "generalized-alpha",
        rhoInfinity: v.rhoInfinity,
        dt: h,
      });
      expect(engineRunsScene(v.key, "chain")).toBe(true);
      expect(engineRunsScene(v.key, "spheres")).toBe(false);
      expect(() => toGeneralizedAlphaModel(clothScene(4), v.rhoInfinity)).toThrow(/chain/);
    }
  });
});

describe("MJCF generation", () => {
  it("has one body per dynamic body and one tendon per spring", () => {
    const xml = toMjcf(clothScene(32), "CG");
    expect(xml.match(/<body /g)).toHaveLength(992);
    expect(xml.match(/<spatial /g)).toHaveLength(3875);
    expect(xml).toContain('solver="CG"');
    const chain = toMjcf(chainScene(3), "Newton");
    expect(chain.match(/type="ball"/g)).toHaveLength(3);
  });
});

/** Engines whose cloth springs are explicit forces (the rest solve them implicitly). */
const EXPLICIT_SPRINGS = new Set(["cannon", "mujoco", "mujoco-cg", "ammo"]);

describe.each([...ENGINE_KEYS])("engine %s", (key) => {
  let engine: EngineAdapter;
  beforeAll(async () => {
    engine = await loadEngine(key);
    await engine.init();
  });

  const ids = SCENE_IDS.filter((id) => engineRunsScene(key, buildScene(id).kind));
  it.each(ids)("%s builds and steps 3 steps with a finite state", (id) => {
    const scene = buildScene(id);
    const st = createBodyStates(scene.bodies.length);
    const r = runScene(engine, scene, {
      warmup: 0,
      throwAway: scene.protocol.throwAway > 0 ? 1 : 0,
      timed: 3,
      final: st,
    });
    expect(r.steps).toBe(3);
    if (id === "S3-32-stiff" && EXPLICIT_SPRINGS.has(key)) {
      // k = 1e4 N/m at this step is past the explicit stability limit (h·√(k/m) ≈ 13):
      // the springs already run away within 3 steps; the run itself must still complete.
      expect(["ok", "invalid", "diverged"]).toContain(r.status);
      return;
    }
    expect(r.message ?? "").toBe("");
    expect(r.status).toBe("ok");
    expect(statesFinite(st)).toBe(true);

    // the first 3 steps, checked against hand-worked values
    // Free fall over 3 steps: ½ g (3h)² = 4.5 g h² (trapezoidal / θ = ½ schemes) up to
    // g h² (1 + 2 + 3) = 6 g h² (semi-implicit Euler); positions may be float32.
    const lo = 4.5 * g * h * h * (1 - 1e-4);
    const hi = 6 * g * h * h * (1 + 1e-4);
    if (scene.kind === "spheres") {
      // Nothing is pressed against anything yet, so everything falls freely, except that
      // a sphere touching a wall may be slowed there (cannon's friction bound does not
      // depend on the normal force).
      scene.bodies.forEach((b, i) => {
        const drop = b.position[2] - st.pos[3 * i + 2];
        const atWall = Math.abs(b.position[0]) === 0.45 || Math.abs(b.position[1]) === 0.45;
        expect(drop).toBeGreaterThan(atWall ? 0 : lo);
        expect(drop).toBeLessThan(hi);
        expect(Math.abs(st.pos[3 * i] - b.position[0])).toBeLessThan(1e-6);
        expect(Math.abs(st.pos[3 * i + 1] - b.position[1])).toBeLessThan(1e-6);
      });
    } else if (scene.kind === "chain") {
      expect(jointDrift(scene, st)).toBeLessThan(1e-4);
      const tip = scene.bodies.length - 1;
      expect(st.pos[3 * tip + 2]).toBeLessThan(0); // it swings down
      expect(st.pos[3 * tip + 2]).toBeGreaterThan(-hi * 1.01); // no faster than free fall
    } else {
      scene.bodies.forEach((b, i) => {
        const drop = b.position[2] - st.pos[3 * i + 2];
        if (b.fixed) expect(Math.abs(drop) + Math.abs(st.pos[3 * i + 1] - b.position[1])).toBe(0);
        else if (scene.springs[0].stiffness === 10 && Math.round(b.position[1] * 31) >= 5) {
          // far from the fixed row, the unstretched springs exert nothing yet
          expect(drop).toBeGreaterThan(lo * 0.95);
          expect(drop).toBeLessThan(hi);
        }
      });
    }
  });
});
