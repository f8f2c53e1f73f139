/**
 * Bullet's soft-body cloth of the comparison (bench/compare/engines/ammo.ts, issue 29) on
 * an 8 × 8 cloth, against facts worked out here: an unpinned cloth released at rest with
 * every link at its rest length falls as one piece, so every node, and the centre of mass,
 * follows Bullet's soft-body integrator (v ← v + g h, then x ← x + v h: semi-implicit Euler)
 * exactly, z_N = −g h² N (N + 1) / 2, which is g t² / 2 up to g h t / 2; pinned nodes (mass
 * 0) never move; a node hanging from a pinned one by one link settles where the link's
 * projection (a fraction kLST of the length error per iteration, piterations times) exactly
 * undoes the step's predicted fall g h². Positions are float32 in this build (btScalar is
 * float).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ammoEngine, clothLinkSettings } from "../../bench/compare/engines/ammo";
import { createBodyStates, type EngineInstance } from "../../bench/compare/engines/types";
import { clothScene, type SceneDesc } from "../../bench/compare/scene";

const N = 8;
const STEPS = 24;

function run(scene: SceneDesc, steps: number): { inst: EngineInstance; pos: Float64Array[] } {
  const inst = ammoEngine.create(scene);
  const st = createBodyStates(scene.bodies.length);
  const pos: Float64Array[] = [];
  inst.read(st);
  pos.push(st.pos.slice());
  for (let k = 0; k < steps; k++) {
    inst.step();
    inst.read(st);
    pos.push(st.pos.slice());
  }
  return { inst, pos };
}

describe("Bullet soft-body cloth (ammojs-typed)", () => {
  beforeAll(async () => {
    await ammoEngine.init();
  });

  it("an unpinned cloth falls as one piece: z_N = −g h² N (N + 1) / 2, xy unchanged", () => {
    const pinned = clothScene(N, 10);
    // every node free; the springs between row-0 nodes are absent from the scene (both
    // ends were fixed), which does not matter here: nothing stretches in a uniform fall
    const scene: SceneDesc = {
      ...pinned,
      bodies: pinned.bodies.map((b) => ({ ...b, fixed: false })),
    };
    const g = -scene.gravity[2];
    const h = scene.h;
    const { inst, pos } = run(scene, STEPS);
    const n = scene.bodies.length;
    const com = (p: Float64Array, axis: number) => {
      let s = 0;
      for (let i = 0; i < n; i++) s += p[3 * i + axis];
      return s / n; // equal masses
    };
    const x0 = com(pos[0], 0);
    const y0 = com(pos[0], 1);
    expect(x0).toBeCloseTo(0.5, 6);
    expect(y0).toBeCloseTo(0.5, 6);
    expect(com(pos[0], 2)).toBe(0);
    // the recurrence v_{k+1} = v_k − g h, z_{k+1} = z_k + v_{k+1} h, written out
    let v = 0;
    let z = 0;
    for (let k = 1; k <= STEPS; k++) {
      v -= g * h;
      z += v * h;
      expect(Math.abs(com(pos[k], 2) - z)).toBeLessThan(1e-6);
      expect(Math.abs(com(pos[k], 0) - x0)).toBeLessThan(1e-6);
      expect(Math.abs(com(pos[k], 1) - y0)).toBeLessThan(1e-6);
      // every node with it (no link is stretched)
      for (let i = 0; i < n; i++)
        expect(Math.abs(pos[k][3 * i + 2] - pos[0][3 * i + 2] - z)).toBeLessThan(1e-6);
    }
    // ... which is the free fall g t² / 2 of t = N h, less g h t / 2
    const t = STEPS * h;
    expect(z).toBeCloseTo(-(g * t * t) / 2 - (g * h * t) / 2, 12);
    expect(Math.abs(com(pos[STEPS], 2) + (g * t * t) / 2)).toBeLessThan((g * h * t) / 2 + 1e-6);
    // the velocities read back from the nodes: −g t
    const st = createBodyStates(n);
    inst.read(st);
    for (let i = 0; i < n; i++) expect(st.vel[3 * i + 2]).toBeCloseTo(-g * t, 4);
    inst.dispose();
  });

  it.each([10, 1e4])("k = %s N/m: the pinned row does not move, the rest hangs below it", (k) => {
    const scene = clothScene(N, k);
    const { inst, pos } = run(scene, STEPS);
    const last = pos[STEPS];
    scene.bodies.forEach((b, i) => {
      if (b.fixed) {
        for (let a = 0; a < 3; a++) expect(last[3 * i + a]).toBe(pos[0][3 * i + a]);
        expect(last[3 * i + 1]).toBe(0);
        expect(last[3 * i + 2]).toBe(0);
      } else {
        // pulled down by gravity, held back by the links: below the start, never below
        // free fall
        const drop = -last[3 * i + 2];
        const t = STEPS * scene.h;
        expect(drop).toBeGreaterThan(0);
        expect(drop).toBeLessThan((-scene.gravity[2] * t * (t + scene.h)) / 2 + 1e-6);
      }
    });
    inst.dispose();
  });

  it.each([10, 1e4])(
    "k = %s N/m: one link under a pinned node settles at Bullet's static stretch",
    (k) => {
      // a pinned node at the origin and a free one 1 m below it, one link at rest length 1 m
      const template = clothScene(2, k);
      const [top, bottom] = template.bodies;
      const scene: SceneDesc = {
        ...template,
        bodies: [
          { ...top, fixed: true, position: [0, 0, 0] },
          { ...bottom, fixed: false, position: [0, 0, -1] },
        ],
        springs: [{ ...template.springs[0], a: 0, b: 1, rest: 1 }],
      };
      const g = -scene.gravity[2];
      const h = scene.h;
      // Each step predicts the node g h² lower (at rest: v = 0), then each of the P projections
      // leaves (1 − kLST) of the stretch: at rest (δ + g h²)(1 − kLST)^P = δ, so
      // δ = g h² r / (1 − r) with r = (1 − kLST)^P (to first order in δ / 1 m ≈ 4e-4).
      const { kLST, piterations } = clothLinkSettings(k);
      const r = (1 - kLST) ** piterations;
      const delta = (g * h * h * r) / (1 - r);
      // a single link's stretch decays by √(1 − kLST) per step (|λ| of
      // e_{n+1} = (1 − kLST)(2 e_n − e_{n−1}) for P = 1): 240 steps settle it far below float32
      const { inst, pos } = run(scene, 240);
      const last = pos[240];
      expect(last[3 * 1] ** 2 + last[3 * 1 + 1] ** 2).toBeLessThan(1e-12);
      expect(Math.abs(-last[3 * 1 + 2] - 1 - delta)).toBeLessThan(1e-6);
      if (k === 10)
        expect(delta).toBeGreaterThan(4e-4); // kLST 0.285, 1 iteration: δ = 4.27e-4 m
      else expect(delta).toBeLessThan(1e-12); // kLST 1: the projection removes the stretch
      inst.dispose();
    },
  );
});
