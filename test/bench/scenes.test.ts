/**
 * Keeps the comparison's scenes building and stepping (so bench/ cannot rot), without
 * timing anything: every scene of ../shared/BENCH-SCENES.md builds in every engine and
 * runs 3 steps through the protocol runner with a finite state (the cloths at 8 × 8, see
 * smokeScene), and the first steps match what can be worked out by hand (free fall of
 * everything that is not yet touching anything, a fixed row that stays put, joints that
 * stay together). The scene descriptions and the accuracy probes are checked against
 * counts and closed forms; the protocol counts the steps an engine says ended short of its
 * stated tolerances (Moreau's rows only).
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  ENGINE_KEYS,
  engineRunsScene,
  isMoreau,
  loadEngine,
} from "../../bench/compare/engines/index";
import {
  GENERALIZED_ALPHA_VARIANTS,
  toGeneralizedAlphaModel,
  toMoreauModel,
} from "../../bench/compare/engines/moreau";
import { toMjcf } from "../../bench/compare/engines/mujoco";
import {
  createBodyStates,
  type EngineAdapter,
  initialStates,
} from "../../bench/compare/engines/types";
import { hullMassProperties } from "../../bench/compare/hull";
import {
  energy,
  jointDrift,
  probeCloth,
  probeHulls,
  probeSpheres,
  rotate,
  statesFinite,
  TerrainSurface,
} from "../../bench/compare/probes";
import { runScene } from "../../bench/compare/protocol";
import {
  buildScene,
  COMPARE_SCENE_IDS,
  chainScene,
  clothScene,
  hullsScene,
  type SceneDesc,
  spheresScene,
  type Vec3,
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

describe("H hulls", () => {
  /** Random rotation matrix (rows) from the tests' generator: Gram–Schmidt of two vectors. */
  const rotation = (rand: () => number): Vec3[] => {
    const norm = (v: Vec3): Vec3 => v.map((c) => c / Math.hypot(...v)) as Vec3;
    const e0 = norm([rand() - 0.5, rand() - 0.5, rand() - 0.5]);
    const t: Vec3 = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
    const d = t[0] * e0[0] + t[1] * e0[1] + t[2] * e0[2];
    const e1 = norm([t[0] - d * e0[0], t[1] - d * e0[1], t[2] - d * e0[2]]);
    const e2: Vec3 = [
      e0[1] * e1[2] - e0[2] * e1[1],
      e0[2] * e1[0] - e0[0] * e1[2],
      e0[0] * e1[1] - e0[1] * e1[0],
    ];
    return [e0, e1, e2];
  };

  it("hull mass properties: a turned, shifted box with inner points, and an octahedron", () => {
    const rand = mulberry32(7);
    const [a, b, c] = [0.05, 0.03, 0.02];
    const R = rotation(rand);
    const shift: Vec3 = [0.3, -0.2, 0.1];
    const local: Vec3[] = [];
    for (const sx of [-1, 1])
      for (const sy of [-1, 1]) for (const sz of [-1, 1]) local.push([sx * a, sy * b, sz * c]);
    for (let k = 0; k < 20; k++)
      local.push([a * (2 * rand() - 1), b * (2 * rand() - 1), c * (2 * rand() - 1)]);
    // x_world = shift + Σ_k local_k e_k (the rows of R are the box axes)
    const world = local.map(
      (p) =>
        [0, 1, 2].map((i) => shift[i] + p[0] * R[0][i] + p[1] * R[1][i] + p[2] * R[2][i]) as Vec3,
    );
    const mp = hullMassProperties(world, 1000);
    const m = 1000 * 8 * a * b * c;
    expect(mp.mass).toBeCloseTo(m, 12);
    for (let i = 0; i < 3; i++) expect(mp.centre[i]).toBeCloseTo(shift[i], 13);
    // box: I = m/3 (b² + c²) with half-extents, ascending: about the long axis a first
    const I = [(m / 3) * (b * b + c * c), (m / 3) * (a * a + c * c), (m / 3) * (a * a + b * b)];
    for (let k = 0; k < 3; k++) {
      expect(mp.inertia[k] / I[k]).toBeCloseTo(1, 12);
      // principal axis k is box axis k up to sign
      const cos = mp.axes[k][0] * R[k][0] + mp.axes[k][1] * R[k][1] + mp.axes[k][2] * R[k][2];
      expect(Math.abs(cos)).toBeCloseTo(1, 10);
    }
    const [x, y, z] = mp.axes;
    const det =
      x[0] * (y[1] * z[2] - y[2] * z[1]) -
      x[1] * (y[0] * z[2] - y[2] * z[0]) +
      x[2] * (y[0] * z[1] - y[1] * z[0]);
    expect(det).toBeCloseTo(1, 12);
    // |x| + |y| + |z| ≤ s: V = 4 s³/3, ∫x² dV = 2 s⁵/15, so I = m (⟨y²⟩ + ⟨z²⟩) = m s²/5
    const s = 0.07;
    const oct: Vec3[] = [
      [s, 0, 0],
      [-s, 0, 0],
      [0, s, 0],
      [0, -s, 0],
      [0, 0, s],
      [0, 0, -s],
      [0.01, 0.02, -0.01],
    ];
    const mo = hullMassProperties(oct, 1000);
    expect(mo.mass).toBeCloseTo((1000 * 4 * s ** 3) / 3, 12);
    for (const Ik of mo.inertia) expect(Ik / ((mo.mass * s * s) / 5)).toBeCloseTo(1, 12);
  });

  it("H-100: the draws of the documented order, exact hull masses, nothing touching at t = 0", () => {
    const scene = hullsScene(100);
    expect(scene.bodies).toHaveLength(100);
    expect(scene.terrain?.vertices).toHaveLength(33 * 33);
    expect(scene.terrain?.triangles).toHaveLength(2 * 32 * 32);
    const terrain = scene.terrain!;
    for (const v of terrain.vertices)
      expect(v[2]).toBe(
        0.1 * Math.sin(1.5 * v[0]) * Math.cos(1.3 * v[1]) + 0.04 * (v[0] ** 2 + v[1] ** 2),
      );
    for (const [i, j, k] of terrain.triangles) {
      const [a, b, c] = [terrain.vertices[i], terrain.vertices[j], terrain.vertices[k]];
      // counter-clockwise seen from above: the xy cross product is positive
      expect((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])).toBeGreaterThan(0);
    }
    // the tests' own mulberry32 through the documented order: count, 3 semi-axes,
    // 5 draws per point, 3 for the orientation
    const rand = mulberry32(30);
    const surface = new TerrainSurface(terrain);
    const w = new Float64Array(3);
    const st = createBodyStates(100);
    scene.bodies.forEach((body, n) => {
      const count = 20 + Math.floor(31 * rand());
      const axes = [rand(), rand(), rand()].map((u) => 0.04 + 0.06 * u);
      for (let k = 0; k < 5 * count + 3; k++) rand();
      expect(body.convexPoints).toHaveLength(count);
      expect(count).toBeGreaterThanOrEqual(20);
      expect(count).toBeLessThanOrEqual(50);
      // the hull lies within the noisy ellipsoid and fills most of it (points on its surface)
      const ellipsoid = (4 / 3) * Math.PI * axes[0] * axes[1] * axes[2] * 1000;
      expect(body.mass).toBeLessThan(ellipsoid * 1.2);
      expect(body.mass).toBeGreaterThan(ellipsoid * 0.4);
      // body frame = principal frame at the centre of mass: the points' hull has its
      // centroid at the origin and a diagonal inertia there
      const mp = hullMassProperties(body.convexPoints!, 1000);
      expect(mp.mass).toBeCloseTo(body.mass, 12);
      for (const c of mp.centre) expect(Math.abs(c)).toBeLessThan(1e-12);
      for (let k = 0; k < 3; k++) {
        expect(mp.inertia[k] / body.inertia[k]).toBeCloseTo(1, 10);
        expect(Math.abs(mp.axes[k][k])).toBeCloseTo(1, 8);
      }
      // on its grid cell, at least the clearance above the terrain
      expect(body.position[0]).toBeCloseTo(-1.35 + 0.3 * (n % 10), 14);
      expect(body.position[1]).toBeCloseTo(-1.35 + 0.3 * Math.floor(n / 10), 14);
      st.pos.set(body.position, 3 * n);
      st.quat.set(body.orientation, 4 * n);
      let reach = 0;
      for (const p of body.convexPoints!) {
        rotate(st.quat, n, p, w);
        reach = Math.max(reach, Math.hypot(...w));
        const gap =
          body.position[2] +
          w[2] -
          surface.height(body.position[0] + w[0], body.position[1] + w[1]);
        expect(gap).toBeGreaterThan(0.05 - 1e-12);
      }
      expect(reach).toBeLessThan(0.1 + 0.002 * Math.sqrt(3) + 1e-12);
    });
    // neighbours 0.3 m apart, hulls within 0.104 m of their centre: no overlap
    const p = probeHulls(scene, st);
    expect(p.maxPenetration).toBe(0);
    expect(p.escaped).toBe(0);
    expect(p.meanHeight).toBeCloseTo(
      scene.bodies.reduce((sum, b) => sum + b.position[2], 0) / 100,
      14,
    );
  });

  it("Moreau's own hull mass properties agree with the scene's", () => {
    const scene = hullsScene(10);
    const model = toMoreauModel(scene);
    for (const b of model.bodies) delete b.inertia;
    const sim = loadModel(model);
    scene.bodies.forEach((b, i) => {
      const J = sim.system.inertiaBody.subarray(9 * i, 9 * i + 9);
      for (let k = 0; k < 3; k++) {
        expect(J[4 * k] / b.inertia[k]).toBeCloseTo(1, 9);
        for (let l = 0; l < 3; l++)
          if (l !== k) expect(Math.abs(J[3 * k + l]) / b.inertia[0]).toBeLessThan(1e-9);
      }
    });
  });

  it("probes: the terrain surface read from its triangles, penetration and lost hulls by hand", () => {
    // a tilted plane z = 0.1 x + 0.2 y + 0.3 over [−1, 1]² as two triangles
    const f = (x: number, y: number) => 0.1 * x + 0.2 * y + 0.3;
    const corners: Vec3[] = [
      [-1, -1, f(-1, -1)],
      [1, -1, f(1, -1)],
      [1, 1, f(1, 1)],
      [-1, 1, f(-1, 1)],
    ];
    const tetra: Vec3[] = [
      [0, 0, -0.05],
      [0.03, 0, 0.02],
      [-0.03, 0.03, 0.02],
      [-0.03, -0.03, 0.02],
    ];
    const body = (id: string) => ({
      id,
      kind: "rigid" as const,
      fixed: false,
      mass: 1,
      inertia: [1, 1, 1] as Vec3,
      position: [0, 0, 0] as Vec3,
      orientation: [1, 0, 0, 0] as [number, number, number, number],
      convexPoints: tetra,
    });
    const scene: SceneDesc = {
      ...hullsScene(10),
      bodies: [body("a"), body("b"), body("c"), body("d")],
      terrain: {
        vertices: corners,
        triangles: [
          [0, 1, 2],
          [0, 2, 3],
        ],
      },
    };
    const surface = new TerrainSurface(scene.terrain!);
    for (const [x, y] of [
      [0.3, -0.7],
      [-0.6, 0.5],
      [0.99, 0.99],
      [-1, -1],
    ])
      expect(surface.height(x, y)).toBeCloseTo(f(x, y), 14);
    expect(surface.height(1.2, 0)).toBeNaN();
    const st = createBodyStates(4);
    st.quat.fill(0);
    for (let i = 0; i < 4; i++) st.quat[4 * i] = 1;
    // a: its lowest point (0, 0, −0.05) 2 mm under the plane at (0.2, 0.1)
    st.pos.set([0.2, 0.1, f(0.2, 0.1) + 0.05 - 0.002], 0);
    // b: turned half a turn about x (the tip points up: the base corners go down to z − 0.02),
    // its corner (0.03, 0, −0.02) 1 mm under the plane
    st.quat.set([0, 1, 0, 0], 4);
    st.pos.set([-0.5, 0.5, f(-0.47, 0.5) + 0.02 - 0.001], 3);
    // c: off the terrain; d: far under it
    st.pos.set([1.5, 0, 0.5], 6);
    st.pos.set([0, 0, -1], 9);
    const p = probeHulls(scene, st);
    expect(p.maxPenetration).toBeCloseTo(0.002, 14);
    expect(p.escaped).toBe(2);
    expect(p.meanHeight).toBeCloseTo((st.pos[2] + st.pos[5] + 0.5 - 1) / 4, 14);
    st.pos[2] += 0.0015; // a now 0.5 mm deep: b's 1 mm is the deepest
    expect(probeHulls(scene, st).maxPenetration).toBeCloseTo(0.001, 14);
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

describe("steps short of a stated tolerance", () => {
  it("the protocol counts the timed steps an instance says were short, outside the timing", () => {
    const scene = buildScene("S2-10");
    let calls = 0;
    const stub = (withShortfall: boolean): EngineAdapter => ({
      key: "stub",
      version: "stub",
      async init() {},
      method: () => "stub",
      create: () => ({
        step() {
          calls++;
        },
        read(out) {
          initialStates(scene, out);
        },
        engineContacts: () => null,
        dispose() {},
        ...(withShortfall ? { shortfall: () => calls % 3 === 0 } : {}),
      }),
    });
    const opts = { warmup: 0, throwAway: 0, timed: 10 };
    expect(runScene(stub(true), scene, opts).accuracy.shortSteps).toBe(3); // steps 3, 6, 9
    calls = 0;
    expect(runScene(stub(false), scene, opts).accuracy.shortSteps).toBeUndefined();
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

  it("S2 Newmark and the resolved cloth keep the linearized step, the stiff cloth Newton's default stopping rule; the generalized-α rows set only integrator, ρ∞ and dt", () => {
    expect(toMoreauModel(chainScene(100)).solver?.newtonIterations).toBe(1);
    expect(toMoreauModel(clothScene(32)).solver?.newtonIterations).toBe(1);
    const stiff = toMoreauModel(buildScene("S3-32-stiff")).solver;
    expect(stiff?.newtonIterations).toBeUndefined();
    expect(stiff?.newtonTolerance).toBeUndefined();
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
const EXPLICIT_SPRINGS = new Set(["cannon", "mujoco", "mujoco-cg"]);
/** The stiff cloth's springs (S3-32-stiff), N/m. */
const STIFF = 1e4;

/**
 * The scenes the engines step: each scene of the comparison at its smallest size: S1-100
 * (S1-1000 is ten such layers), S2-10 (S2-100 is the same chain, longer), the cloth at
 * 8 × 8 with either stiffness (S3-32 is the same grid, finer: its description is checked
 * above, its MJCF below) and H-100. The larger ones go through the same builders and
 * adapters and only take longer (MuJoCo alone compiles S3-32's 992 three-slide bodies in
 * 12 s); `npm run bench -- --compare` steps them in full.
 */
const SMOKE_SCENES = [
  spheresScene(100),
  chainScene(10),
  clothScene(8),
  clothScene(8, STIFF),
  hullsScene(100),
];

it("the engines step every kind of scene of the comparison, at both cloth stiffnesses", () => {
  const kinds = (scenes: SceneDesc[]) =>
    new Set(scenes.map((sc) => `${sc.kind} ${sc.springs[0]?.stiffness ?? ""}`));
  expect(kinds(SMOKE_SCENES)).toEqual(kinds(COMPARE_SCENE_IDS.map((id) => buildScene(id))));
  expect(kinds(SMOKE_SCENES).size).toBe(SMOKE_SCENES.length);
});

describe.each([...ENGINE_KEYS])("engine %s", (key) => {
  let engine: EngineAdapter;
  beforeAll(async () => {
    engine = await loadEngine(key);
    await engine.init();
  });

  const scenes = SMOKE_SCENES.filter((sc) => engineRunsScene(key, sc.kind));
  it.each(scenes.map((sc) => [sc.id, sc] as const))(
    "%s builds and steps 3 steps with a finite state",
    (_id, scene) => {
      const st = createBodyStates(scene.bodies.length);
      const r = runScene(engine, scene, {
        warmup: 0,
        throwAway: scene.protocol.throwAway > 0 ? 1 : 0,
        timed: 3,
        final: st,
      });
      expect(r.steps).toBe(3);
      // Moreau's rows count the steps short of a stated tolerance; the peers state none
      if (isMoreau(key)) expect(r.accuracy.shortSteps).toBeLessThanOrEqual(3);
      else expect(r.accuracy.shortSteps).toBeUndefined();
      if (
        scene.kind === "cloth" &&
        scene.springs[0].stiffness === STIFF &&
        EXPLICIT_SPRINGS.has(key)
      ) {
        // k = 1e4 N/m at this step is past the explicit stability limit h·√(k/m) = 2
        // (3.3 on the 8 × 8 cloth, 13 on the 32 × 32): the springs run away within 3 steps;
        // the run itself must still complete.
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
      } else if (scene.kind === "hulls") {
        // 5 cm above the terrain: every hull falls freely, without turning
        scene.bodies.forEach((b, i) => {
          const drop = b.position[2] - st.pos[3 * i + 2];
          expect(drop).toBeGreaterThan(lo);
          expect(drop).toBeLessThan(hi);
          expect(Math.abs(st.pos[3 * i] - b.position[0])).toBeLessThan(1e-6);
          expect(Math.abs(st.pos[3 * i + 1] - b.position[1])).toBeLessThan(1e-6);
          for (let k = 0; k < 4; k++)
            expect(
              Math.abs(Math.abs(st.quat[4 * i + k]) - Math.abs(b.orientation[k])),
            ).toBeLessThan(1e-6);
        });
      } else if (scene.kind === "chain") {
        expect(jointDrift(scene, st)).toBeLessThan(1e-4);
        const tip = scene.bodies.length - 1;
        expect(st.pos[3 * tip + 2]).toBeLessThan(0); // it swings down
        expect(st.pos[3 * tip + 2]).toBeGreaterThan(-hi * 1.01); // no faster than free fall
      } else {
        // the grid's spacing: the second particle of the fixed row is one spacing along x
        const spacing = scene.bodies[1].position[0];
        scene.bodies.forEach((b, i) => {
          const drop = b.position[2] - st.pos[3 * i + 2];
          if (b.fixed) expect(Math.abs(drop) + Math.abs(st.pos[3 * i + 1] - b.position[1])).toBe(0);
          else if (scene.springs[0].stiffness === 10 && Math.round(b.position[1] / spacing) >= 5) {
            // far from the fixed row, the unstretched springs exert nothing yet
            expect(drop).toBeGreaterThan(lo * 0.95);
            expect(drop).toBeLessThan(hi);
          }
        });
      }
    },
  );
});
