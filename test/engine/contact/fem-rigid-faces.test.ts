/**
 * Rigid shapes against the surface triangles of a fem body (src/engine/contact/fem-faces.ts,
 * "Rigid shapes"): a box's corners and a ball's centre (with its radius) meet the faces, the
 * contact acting on the rigid body at its point and on the triangle's three nodes with the
 * barycentric weights. Before, a rigid shape met a fem body at its vertices only, and a box
 * or a ball resting on the middle of a coarse block's face went through it.
 *
 * The scene: a 0.6 × 0.6 × 0.2 m St Venant–Kirchhoff block of a single cell (its 8 nodes
 * 0.6 m apart on the top face), 36 kg, on a floor; a 2 kg box of 0.1 m or a 2 kg ball of
 * radius 0.05 m on the middle of its top face.
 *  - Resting, over 4 s, under every integrator that takes fem contacts (nsc: moreau-jean,
 *    backward-euler; smc: backward-euler, newmark, generalized-alpha), the shape let go
 *    touching the face: its lowest point stays above the top face, which between its nodes
 *    lies above the lowest of them (a face of flat triangles lies above its lowest corner),
 *    less a penetration bound of 0.25 mm once the start's transient is over (after 0.5 s):
 *    smc's linear law puts at most m g/k = 0.196 mm on one contact (all the weight on it),
 *    nsc's position projection leaves at most its tolerance 2·10⁻³ ℓ = 0.2 mm (ℓ = 0.1 m,
 *    the smallest colliding shape). Within the transient (the block sagging under its own
 *    weight as the shape lands: smc's penetration reaches 0.42 mm under newmark at step 6,
 *    measured) 1 mm. Before the shapes fell to the floor, 0.15 m below the face.
 *  - Statics: over the last second Σ F_n n_z on the shape (its contacts' normal forces,
 *    with their sign: the face is side a, the normal from it to the shape) averages m g
 *    within 0.5 % (the block rings, undamped: the shape rides it; the mean force is m g
 *    plus m Δv/T, the momentum it gains over the window).
 *  - Drop with restitution 0, over 10 s: the ball dropped 0.1 m onto the face never raises
 *    the total energy (a step may not gain more than 1e-6 of m g times the drop) nor E +
 *    energy.dissipated (1e-8 J a step: the block's own trapezoidal error is 1.2e-9 J), and
 *    comes to rest on the face (nsc under Moreau–Jean at θ = ½ and backward Euler, smc
 *    under backward Euler). Before: E + dissipated rose 23 and 33 mJ at the two impact
 *    steps (Moreau–Jean; 65 mJ under backward Euler), their impulses booked on the mean
 *    velocity where the positions move at the end one (NonsmoothContact
 *    .endVelocityImpulseWork); and E rose 2.4 mJ at step 36, where the ball's contact,
 *    8.6 μm open and at rest at the step's start (relative a_n under gravity 0), was left
 *    out and the face rang up through it within the step, the projection pushing them
 *    apart (booked as the contact's work; now active by the closing band's elastic a_n).
 *  - Both sets on one shape (smc, a linear law): a box resting on a stiff block's vertices
 *    and with its corners on the block's faces sinks to m g/(k A), A the larger of the two
 *    sets' areas, under a law per unit area (each set covers the patch: each contact's
 *    area times max(A, A′)/(A + A′), ArtiSynth's two-way ½ for equal sets), and to
 *    m g/(k n), n the larger of the two sets' counts, under a law per contact.
 *  - Detection: a ball over a tetrahedron's tilted top face: gap n·(c − x₀) − r with the
 *    test's own plane, the normal, the point midway between c − r n and c − d n, the weights
 *    rebuilding c − d n, the key the shape's with itself.
 *  - A capsule lying across a face, its ends beyond it (its axis samples, at most r apart,
 *    carry it; before, its two ends alone met the faces and it fell to the floor): at rest on
 *    a stiff block at the depth of the law (per contact m g/(N k); per unit area
 *    k δ Σ ℓ 2√(2rδ − δ²) = m g; nsc: none), Σ F_n n_z = m g to 1e-6; rolled across the face
 *    its energy stays within 1e-3 of its kinetic energy above E₀ and it keeps its speed; on
 *    the soft ringing block (1 × 1 and 4 × 4 cells) it stays up over 4 s, weighing m g.
 *  - A 1.1 m box (0.1 m square) lying across that stiff block, its corners off it: its edge
 *    samples carry it at the law's depth (per contact m g/(N k), per unit area m g/(k N A),
 *    A its bottom face over its rim's samples; nsc: none), Σ F_n n_z = m g to 1e-6.
 *  - Momentum: without gravity, a box at 1 m/s strikes the free block's face: Σ m v over the
 *    box and the block's nodes stays what it was to round-off (each contact's force on the
 *    box is balanced by −w_i F on the three nodes, Σ w_i = 1), and the box is stopped by the
 *    face (before, it went through the block unchanged).
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { FemFaceContacts } from "../../../src/engine/contact/fem-faces";
import { FemVertexContacts } from "../../../src/engine/contact/fem-vertices";
import { femNodeId } from "../../../src/engine/forces/fem/build";
import { boxMesh } from "../../../src/engine/forces/fem/mesh";
import { meshSurface } from "../../../src/engine/forces/fem/surface";
import { contactKey } from "../../../src/engine/geometry/contact-buffer";
import { loadModel } from "../../../src/engine/index";
import { BodySystem } from "../../../src/engine/model/body-system";
import { bodyInit } from "../../support/body-init";

const G = 9.81;
const MASS = 2;
const HALF = 0.05;
const TOP = 0.2;

type Shape = "box" | "ball" | "capsule";

function scene(
  shape: Shape,
  method: "nsc" | "smc",
  integrator: string,
  options: { drop?: number; gravity?: boolean; floor?: boolean; cells?: number } = {},
) {
  const { drop = 0, gravity = true, floor = true, cells = 1 } = options;
  const s = Math.SQRT1_2;
  return loadModel({
    gravity: [0, 0, gravity ? -G : 0],
    bodies: [
      ...(floor ? [{ id: "floor", fixed: true, shapes: [{ type: "plane" }] }] : []),
      {
        id: "shape",
        mass: MASS,
        // off the face's centre (and its diagonal) by a few cm
        position: [0.03, 0.02, TOP + HALF + drop],
        // a capsule lies along x: its axis (local z) turned onto x
        ...(shape === "capsule" ? { orientation: [s, 0, s, 0] } : {}),
        shapes: [
          shape === "box"
            ? { type: "box", halfExtents: [HALF, HALF, HALF] }
            : shape === "capsule"
              ? { type: "capsule", radius: HALF, halfLength: 0.5 }
              : { type: "sphere", radius: HALF },
        ],
      },
    ],
    fem: [
      {
        id: "blk",
        box: { size: [0.6, 0.6, 0.2], resolution: [cells, cells, 1], center: [0, 0, 0.1] },
        density: 500,
        youngModulus: 1e6,
        poissonRatio: 0.3,
        material: "stvk",
      },
    ],
    contact:
      method === "nsc"
        ? { method, restitution: 0 }
        : { method, behavior: { type: "linear", stiffness: 1e5, damping: 100 } },
    solver: { integrator, dt: 0.005 },
  } as ModelInput);
}

type Sim = ReturnType<typeof loadModel>;

/** The block's 8 nodes' body indices. */
function nodes(sim: Sim): number[] {
  return Array.from({ length: 8 }, (_, k) => sim.system.index.get(femNodeId("blk", k)) as number);
}

/** The shape's lowest point's height above the block's lowest top-face node (m). */
function clearance(sim: Sim, shape: Shape): number {
  const s = sim.system;
  const b = s.index.get("shape") as number;
  let top = Number.POSITIVE_INFINITY;
  for (const n of nodes(sim)) if (s.pos[3 * n + 2] > 0.1) top = Math.min(top, s.pos[3 * n + 2]);
  // a box's lowest corner: h Σ_j |R_zj| below its centre (R's z row), a ball's r
  const o = 9 * b;
  const R = s.rotation;
  const reach =
    shape === "box" ? HALF * (Math.abs(R[o + 6]) + Math.abs(R[o + 7]) + Math.abs(R[o + 8])) : HALF;
  return s.pos[3 * b + 2] - reach - top;
}

/** Σ F_n n_z on the shape over its contacts (N; the face is side a, the shape side b). */
function upwardForce(sim: Sim): number {
  let f = 0;
  for (const c of sim.state().contacts) {
    if (c.bodies[1] === "shape") f += c.normalForce * c.normal[2];
    else if (c.bodies[0] === "shape") f -= c.normalForce * c.normal[2];
  }
  return f;
}

const ROWS: Array<["nsc" | "smc", string]> = [
  ["nsc", "moreau-jean"],
  ["nsc", "backward-euler"],
  ["smc", "backward-euler"],
  ["smc", "newmark"],
  ["smc", "generalized-alpha"],
];

describe("a rigid shape on the middle of a coarse fem block's face", () => {
  for (const shape of ["box", "ball"] as const)
    for (const [method, integrator] of ROWS)
      it(`${shape}, ${method} ${integrator}: stays on the face over 4 s and weighs m g`, () => {
        const sim = scene(shape, method, integrator);
        const h = 0.005;
        let least = Number.POSITIVE_INFINITY;
        let settled = Number.POSITIVE_INFINITY;
        let force = 0;
        const b = sim.system.index.get("shape") as number;
        let v0 = 0;
        for (let k = 0; k < 800; k++) {
          sim.step(1);
          least = Math.min(least, clearance(sim, shape));
          if (k >= 100) settled = Math.min(settled, clearance(sim, shape));
          if (k === 599) v0 = sim.system.vel[3 * b + 2];
          if (k >= 600) force += upwardForce(sim);
        }
        expect(least, "clearance (m)").toBeGreaterThan(-1e-3);
        expect(settled, "clearance after 0.5 s (m)").toBeGreaterThan(-2.5e-4);
        const T = 200 * h;
        const mean = force / 200;
        expect(Math.abs(mean / (MASS * G) - 1), `mean force ${mean} N`).toBeLessThan(5e-3);
        // and it rests: its momentum over the window is small against m g T
        const dv = sim.system.vel[3 * b + 2] - v0;
        expect(Math.abs(MASS * dv)).toBeLessThan(5e-3 * MASS * G * T);
      });
});

describe("a ball dropped on the face (restitution 0)", () => {
  for (const [method, integrator] of [
    ["nsc", "moreau-jean"],
    ["nsc", "backward-euler"],
    ["smc", "backward-euler"],
  ] as const)
    it(`${method} ${integrator}: over 10 s neither E nor E + dissipated rises, and it comes to rest on the face`, () => {
      const drop = 0.1;
      const sim = scene("ball", method, integrator, { drop });
      const start = sim.state().energy;
      let previous = start.total;
      let balance = start.total + start.dissipated;
      for (let k = 0; k < 2000; k++) {
        sim.step(1);
        const e = sim.state().energy;
        expect(e.total, `step ${k + 1}`).toBeLessThanOrEqual(previous + 1e-6 * MASS * G * drop);
        // the block's own trapezoidal error on its stvk forces is 1.2e-9 J a step at most
        // (measured, the block alone on the floor)
        expect(e.total + e.dissipated, `step ${k + 1}`).toBeLessThanOrEqual(balance + 1e-8);
        previous = e.total;
        balance = e.total + e.dissipated;
      }
      expect(balance).toBeLessThanOrEqual(start.total + start.dissipated + 1e-8);
      expect(previous).toBeLessThan(start.total);
      expect(clearance(sim, "ball")).toBeGreaterThan(-2.5e-4);
      expect(clearance(sim, "ball")).toBeLessThan(1e-3);
    });
});

/**
 * A 0.15 m box on a stiff block (E = 1e9 Pa: its own sag 6e-8 m) of 4 × 4 × 1 cells, 0.05 m
 * apart, under smc's linear law `behavior`: the box covers the 9 top vertices within
 * ±0.075 m and its 4 corners lie on the block's top faces, both sets pushing on the same
 * patch. Returns the box's bottom's depth below the mean of those 9 vertices after 1 s (m),
 * and their count and area (ArtiSynth's: a third of each top triangle around a vertex under
 * the box, from the block's own surface).
 */
function boxOnStiffBlock(behavior: { stiffness: number; perUnitArea?: boolean }) {
  const half = 0.075;
  const block = { size: [0.2, 0.2, 0.1], resolution: [4, 4, 1], center: [0, 0, 0.05] } as const;
  const sim = loadModel({
    gravity: [0, 0, -G],
    bodies: [
      {
        id: "box",
        mass: MASS,
        position: [0, 0, 0.1 + 0.05],
        shapes: [{ type: "box", halfExtents: [half, half, 0.05] }],
      },
    ],
    fem: [
      {
        id: "b",
        box: { ...block, size: [...block.size], resolution: [...block.resolution] },
        fixedFaces: ["-z"],
        density: 500,
        youngModulus: 1e9,
        poissonRatio: 0.3,
      },
    ],
    contact: { method: "smc", behavior: { type: "linear", ...behavior, stepDamping: 0.5 } },
    solver: { integrator: "backward-euler", dt: 0.01, newtonIterations: 20 },
  } as ModelInput);
  sim.step(100);
  const mesh = boxMesh({ ...block, orientation: [1, 0, 0, 0] });
  const surface = meshSurface(mesh.elements, mesh.nodes.length / 3);
  const X = mesh.nodes;
  const under = (n: number) => Math.abs(X[3 * n]) < half && Math.abs(X[3 * n + 1]) < half;
  let area = 0;
  for (let t = 0; t < surface.triangles.length; t += 3) {
    const [p, q, r] = [0, 1, 2].map((c) => surface.triangles[t + c]);
    if (![p, q, r].every((n) => Math.abs(X[3 * n + 2] - 0.1) < 1e-12)) continue;
    const a =
      0.5 *
      Math.abs(
        (X[3 * q] - X[3 * p]) * (X[3 * r + 1] - X[3 * p + 1]) -
          (X[3 * q + 1] - X[3 * p + 1]) * (X[3 * r] - X[3 * p]),
      );
    area += (a * [p, q, r].filter(under).length) / 3;
  }
  const s = sim.system;
  const box = s.pos[3 * (s.index.get("box") as number) + 2] - 0.05;
  let top = 0;
  let count = 0;
  for (let n = 0; n < mesh.nodes.length / 3; n++) {
    if (Math.abs(X[3 * n + 2] - 0.1) > 1e-12 || !under(n)) continue;
    top += s.pos[3 * (s.index.get(femNodeId("b", n)) as number) + 2];
    count++;
  }
  return { depth: top / count - box, count, area, corners: 4 * half * half };
}

describe("a box on a fem block's vertices and faces at once (smc, linear law)", () => {
  it("per unit area: sinks to m g/(k A), A the larger of the vertices' and the corners' areas under it", () => {
    const k = 1e7;
    const { depth, count, area, corners } = boxOnStiffBlock({ stiffness: k, perUnitArea: true });
    expect(count).toBe(9);
    // k A δ = m g, each contact's area times max(A_v, A_c)/(A_v + A_c) (fem-faces.ts
    // shareTwoWay; A_v = 0.02333, A_c = 0.0225 m²: measured 8.4096e-5 m against 8.4086e-5;
    // with each halved it sank m g/(k A), A their mean; both sets at full area, half that)
    const expected = (MASS * G) / (k * Math.max(area, corners));
    expect(Math.abs(depth / expected - 1)).toBeLessThan(2e-3);
  });

  it("per contact: sinks to m g/(k n), n = max(9, 4) the larger set's count", () => {
    // each set alone carries the box (9 vertices on the box's face, 4 corners on the
    // block's): each contact's force takes max(9, 4)/(9 + 4), as the per-area law's areas;
    // both at full stiffness it sank m g/(13 k) = 1.509e-5 m, each halved m g/(6.5 k)
    // (measured 2.18014e-5 m against 2.18e-5)
    const k = 1e5;
    const { depth, count } = boxOnStiffBlock({ stiffness: k });
    expect(count).toBe(9);
    const expected = (MASS * G) / (k * count);
    expect(Math.abs(depth / expected - 1)).toBeLessThan(2e-3);
  });
});

describe("a box striking a free fem block without gravity", () => {
  for (const [method, integrator] of [
    ["nsc", "moreau-jean"],
    ["smc", "backward-euler"],
  ] as const)
    it(`${method} ${integrator}: Σ m v kept to round-off, the box stopped by the face`, () => {
      const sim = scene("box", method, integrator, { drop: 0.02, gravity: false, floor: false });
      const s = sim.system;
      const b = s.index.get("shape") as number;
      s.vel[3 * b + 2] = -1;
      const momentum = () => {
        const p = [0, 0, 0];
        for (let x = 0; x < s.numBodies; x++) {
          if (s.dofOffset[x] < 0) continue;
          for (let k = 0; k < 3; k++) p[k] += s.mass[x] * s.vel[3 * x + k];
        }
        return p;
      };
      const p0 = momentum();
      let least = Number.POSITIVE_INFINITY;
      for (let k = 0; k < 200; k++) {
        sim.step(1);
        least = Math.min(least, clearance(sim, "box"));
        const p = momentum();
        for (let c = 0; c < 3; c++)
          expect(Math.abs(p[c] - p0[c]), `step ${k + 1} axis ${c}`).toBeLessThan(1e-12 * MASS);
      }
      // stopped: with e = 0 the two would share 2 kg·m/s over 38 kg (0.053 m/s); the block
      // rings, so the box only has to have lost most of its speed and stayed above the face
      expect(s.vel[3 * b + 2]).toBeGreaterThan(-0.5);
      expect(least).toBeGreaterThan(-1e-3);
    });
});

describe("a rigid point's contact on a face (the detection's numbers)", () => {
  it("a ball over a tetrahedron's top face: gap n·(c − x₀) − r, the projection's weights, the midpoint", () => {
    // top face (x₁, x₂, x₃) tilted a little; the ball's centre c over its interior
    const x = [0, 0, -1, -0.5, -0.5, 0.01, 0.5, -0.5, -0.02, 0, 0.6, 0.03];
    const c: [number, number, number] = [0.05, -0.1, 0.052];
    const r = 0.05;
    const sys = new BodySystem([
      ...Array.from({ length: 4 }, (_, k) =>
        bodyInit(`n${k}`, "particle", { position: [x[3 * k], x[3 * k + 1], x[3 * k + 2]] }),
      ),
      bodyInit("ball", "rigid", { mass: 1, position: c }),
    ]);
    const vertices = new FemVertexContacts(sys, [
      { surface: meshSurface([0, 1, 2, 3], 4), nodeBodies: Int32Array.from([0, 1, 2, 3]) },
    ]);
    vertices.firstShape = 1;
    const shapes = [{ shape: { type: "sphere", radius: r } as const, body: 4 }, ...vertices.shapes];
    const faces = new FemFaceContacts(sys, vertices, [], shapes);
    faces.detect(0.01);
    const b = faces.buffer;
    expect(b.count).toBe(1);
    // the test's own plane of (x₁, x₂, x₃): n = (x₂ − x₁) × (x₃ − x₁)/|…| (outward: up)
    const p = (k: number) => [x[3 * k], x[3 * k + 1], x[3 * k + 2]];
    const sub = (a: number[], d: number[]) => a.map((v, i) => v - d[i]);
    const e1 = sub(p(2), p(1));
    const e2 = sub(p(3), p(1));
    let n = [
      e1[1] * e2[2] - e1[2] * e2[1],
      e1[2] * e2[0] - e1[0] * e2[2],
      e1[0] * e2[1] - e1[1] * e2[0],
    ];
    const l = Math.hypot(n[0], n[1], n[2]);
    n = n.map((v) => v / l);
    const d = n[0] * (c[0] - x[3]) + n[1] * (c[1] - x[4]) + n[2] * (c[2] - x[5]);
    expect(b.bodyA[0]).toBeGreaterThanOrEqual(1);
    expect(b.bodyB[0]).toBe(4);
    expect(b.gap[0]).toBeCloseTo(d - r, 14);
    for (let k = 0; k < 3; k++) {
      expect(b.normal[k]).toBeCloseTo(n[k], 14);
      // midway between the ball's surface point c − r n and the face's c − d n
      expect(b.point[k]).toBeCloseTo(c[k] - 0.5 * (r + d) * n[k], 14);
    }
    // the weights put the projection c − d n back together
    let w = 0;
    const q = [0, 0, 0];
    for (let k = 0; k < 3; k++) {
      const node = faces.nodes[k];
      w += faces.weights[k];
      for (let j = 0; j < 3; j++) q[j] += faces.weights[k] * x[3 * node + j];
    }
    expect(w).toBeCloseTo(1, 14);
    for (let j = 0; j < 3; j++) expect(q[j]).toBeCloseTo(c[j] - d * n[j], 14);
    // its key is the shape with itself, a pair the detector never makes
    expect(b.key[0]).toBe(contactKey(0, 0, b.feature[0]));
  });
});

/**
 * A 2 kg capsule (r = 0.05 m, L = 0.525 m) lying along x across a stiff fem block
 * (0.6 × 0.6 × 0.2 m, one cell, bottom fixed, E = 1e10 Pa: its top corners move 1e-8 m
 * under the capsule; Rayleigh r_K = 1e-3 s so that it comes to rest), both its ends beyond
 * the block's top face: its axis samples (fem-faces.ts, "Rigid shapes": m = ⌈2L/r⌉ = 21
 * intervals, ℓ = 2L/m = 0.05 m apart) at ℓ j − L carry it, the N = 12 of them over the face
 * (from −0.275 to 0.275 m, symmetric about its centre, none within r of the rim). Before,
 * its two ends alone met the faces and it fell through onto the floor. Returns its bottom's
 * depth below the top face (the mean of the four top nodes) and Σ F_n n_z on it after 2 s.
 */
function capsuleOnStiffBlock(contact: Record<string, unknown>, shape?: Record<string, unknown>) {
  const sim = capsuleScene(contact, 0.01, 1e-3, undefined, undefined, 0, shape);
  sim.step(200);
  const sys = sim.system;
  const b = sys.index.get("shape") as number;
  return { depth: topFace(sim) - (sys.pos[3 * b + 2] - HALF), force: upwardForce(sim), sim };
}

/** The block's top face's height: the mean of its four top nodes (m). */
function topFace(sim: Sim): number {
  let top = 0;
  for (const n of nodes(sim))
    if (sim.system.pos[3 * n + 2] > 0.1) top += sim.system.pos[3 * n + 2] / 4;
  return top;
}

/**
 * capsuleOnStiffBlock's scene, the capsule at rest (or moving at `velocity` with angular
 * velocity `spin`, world), step dt, the block's Rayleigh r_K.
 */
function capsuleScene(
  contact: Record<string, unknown>,
  dt: number,
  rayleighStiffness: number,
  velocity = [0, 0, 0],
  spin = [0, 0, 0],
  y = 0,
  shape: Record<string, unknown> = { type: "capsule", radius: HALF, halfLength: 0.525 },
) {
  const s = Math.SQRT1_2;
  return loadModel({
    gravity: [0, 0, -G],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane" }] },
      {
        id: "shape",
        mass: MASS,
        position: [0, y, TOP + HALF],
        // local z (the axis) onto world x
        orientation: [s, 0, s, 0],
        velocity,
        angularVelocity: spin,
        shapes: [shape],
      },
    ],
    fem: [
      {
        id: "blk",
        box: { size: [0.6, 0.6, 0.2], resolution: [1, 1, 1], center: [0, 0, 0.1] },
        fixedFaces: ["-z"],
        density: 500,
        youngModulus: 1e10,
        poissonRatio: 0.3,
        material: "stvk",
      },
    ],
    contact,
    solver: {
      integrator: contact.method === "nsc" ? "moreau-jean" : "backward-euler",
      dt,
      rayleighStiffness,
    },
  } as ModelInput);
}

describe("a long capsule lying across a coarse fem face, its ends off the face", () => {
  const N = 12;
  const spacing = 0.05;

  it("smc, a law per contact: rests at m g/(N k) with the forces summing to m g", () => {
    const k = 1e5;
    const { depth, force } = capsuleOnStiffBlock({
      method: "smc",
      behavior: { type: "linear", stiffness: k, stepDamping: 0.5 },
    });
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    // N equal springs in parallel: N k δ = m g
    const expected = (MASS * G) / (N * k);
    expect(Math.abs(depth / expected - 1), `depth ${depth} m`).toBeLessThan(5e-4);
  });

  it("smc, a law per unit area: rests where k δ Σ A = m g, A a strip ℓ · 2√(2rδ − δ²) each", () => {
    const k = 1e8;
    const { depth, force } = capsuleOnStiffBlock({
      method: "smc",
      behavior: { type: "linear", stiffness: k, perUnitArea: true, stepDamping: 0.5 },
    });
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    // the side's cross-section, a circle of radius r whose lowest point is δ under the face,
    // cuts it in a chord of half-width √(r² − (r − δ)²): each sample's strip is that chord
    // times its ℓ of axis; N of them at one depth carry m g (bisection on the monotone
    // N k δ ℓ 2√(2rδ − δ²))
    const load = (d: number) => N * k * d * spacing * 2 * Math.sqrt(2 * HALF * d - d * d);
    let lo = 0;
    let hi = 1e-3;
    for (let i = 0; i < 200; i++) {
      const mid = 0.5 * (lo + hi);
      if (load(mid) < MASS * G) lo = mid;
      else hi = mid;
    }
    expect(Math.abs(depth / lo - 1), `depth ${depth} m, closed form ${lo}`).toBeLessThan(5e-4);
  });

  it("nsc moreau-jean: rests on the face (depth within the projection's tolerance), forces m g", () => {
    const { depth, force, sim } = capsuleOnStiffBlock({ method: "nsc", restitution: 0 });
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    // the hard contact's law: no penetration, up to the projection tolerance 2e-3 ℓ
    // (ℓ = 0.1 m, the capsule's diameter, the smallest colliding shape)
    expect(Math.abs(depth), `depth ${depth} m`).toBeLessThan(2e-4);
    const samples = sim.state().contacts.filter((c) => c.bodies.includes("shape")).length;
    expect(samples).toBe(N);
  });
});

describe("a long capsule rolling across a coarse fem face (the block undamped)", () => {
  // from y = −0.2 to 0.2 m at v = 0.1 m/s over 4 s, its axis along x: its 12 samples over the
  // face move across the face's diagonal and change triangle one after another
  const v = 0.1;
  for (const [method, contact] of [
    // rolling: friction holds its contact line, ω = −v/r about x (v + ω × (−r z) = 0)
    ["nsc moreau-jean, μ = 0.5", { method: "nsc", restitution: 0, friction: 0.5 }],
    // frictionless, sliding as it spins: smc's friction takes a step to grip (a ball
    // started rolling gains 1.9e-3 J at step 1 as well)
    [
      "smc backward-euler, frictionless",
      {
        method: "smc",
        friction: 0,
        behavior: { type: "linear", stiffness: 1e6, stepDamping: 0.5 },
      },
    ],
  ] as const)
    it(`${method}: stays on the face, keeps its speed, E never above E₀ + 1e-3 of its kinetic energy`, () => {
      const sim = capsuleScene(contact, 0.005, 0, [0, v, 0], [-v / HALF, 0, 0], -0.2);
      const sys = sim.system;
      const b = sys.index.get("shape") as number;
      const start = sim.state().energy;
      let previous = start.total;
      let least = Number.POSITIVE_INFINITY;
      for (let k = 0; k < 800; k++) {
        sim.step(1);
        const e = sim.state().energy.total;
        // nsc: 8.8e-6 J at most (5.9e-4 of the kinetic energy, the stiff block's ringing as
        // the capsule loads it; a ball rolled the same way gains 9.6e-6 J); backward Euler
        // only loses energy
        expect(e - start.total, `step ${k + 1}`).toBeLessThan(1e-3 * start.kinetic);
        if (contact.method === "smc")
          expect(e, `step ${k + 1}`).toBeLessThanOrEqual(previous + 1e-9);
        previous = e;
        least = Math.min(least, sys.pos[3 * b + 2] - HALF - topFace(sim));
      }
      expect(least, "clearance (m)").toBeGreaterThan(-2e-4);
      expect(Math.abs(sys.vel[3 * b + 1] / v - 1)).toBeLessThan(1e-2);
      expect(sys.pos[3 * b + 1]).toBeCloseTo(0.2, 2);
    });
});

describe("a long capsule on a soft fem block, its ends beyond the block (ringing, undamped)", () => {
  // 2 kg, r = 0.05, L = 0.5 m along x at (0.03, 0.02) on the 36 kg block of scene() (E = 1e6
  // Pa), one cell or 4 × 4: the vertex rows 0.15 m apart, wider than its 0.1 m diameter.
  // Before, it fell through onto the floor (z = 0.0499; on the 4 × 4 block it brushed the
  // row y = 0, was pushed sideways and dropped between rows)
  for (const cells of [1, 4])
    for (const [method, integrator] of [
      ["nsc", "moreau-jean"],
      ["smc", "backward-euler"],
    ] as const)
      it(`${cells} × ${cells} cells, ${method} ${integrator}: stays on the face over 4 s and weighs m g`, () => {
        const sim = scene("capsule", method, integrator, { cells });
        const b = sim.system.index.get("shape") as number;
        let lowest = Number.POSITIVE_INFINITY;
        let force = 0;
        let v0 = 0;
        for (let k = 0; k < 800; k++) {
          sim.step(1);
          lowest = Math.min(lowest, sim.system.pos[3 * b + 2]);
          if (k === 599) v0 = sim.system.vel[3 * b + 2];
          if (k >= 600) force += upwardForce(sim);
        }
        // the face sags under the block's own weight and the capsule's by under 2 mm
        expect(lowest, "capsule centre's height (m)").toBeGreaterThan(TOP + HALF - 2e-3);
        // Σ F n_z averages m g over the last second (m g + m Δv/T: the block rings), and the
        // capsule gains little momentum over it: it rests
        const T = 1;
        const dv = sim.system.vel[3 * b + 2] - v0;
        const mean = force / 200;
        expect(Math.abs(mean / (MASS * G) - 1), `mean force ${mean} N`).toBeLessThan(5e-3);
        expect(Math.abs(MASS * dv)).toBeLessThan(5e-3 * MASS * G * T);
        expect(Math.abs(sim.system.pos[3 * b + 1] - 0.02), "sideways drift (m)").toBeLessThan(0.05);
      });
});

describe("a long box lying across a coarse fem face, its corners off the face", () => {
  // 2 kg, half extents 0.05, 0.05, 0.55 m (the last along x) on capsuleOnStiffBlock's stiff block: its
  // edges sampled at most its middle side 0.1 m apart (fem-faces.ts, "Rigid shapes":
  // ⌈0.55/0.05⌉ = 11 intervals along it, ℓ = 0.1 m), at x = 0.1 j − 0.55: N = 12 samples over
  // the face, 6 on each long bottom edge (x = ±0.05, ±0.15, ±0.25, symmetric about its
  // centre). Before, only its 8 corners met the faces, all off the block: it fell through to
  // the floor (with 0.5 m, z = 0.0499)
  const N = 12;
  // long along its local z, which the scene turns onto world x
  const box = { type: "box", halfExtents: [HALF, HALF, 0.55] };

  it("smc, a law per contact: rests at m g/(N k) with the forces summing to m g", () => {
    const k = 1e5;
    const { depth, force } = capsuleOnStiffBlock(
      { method: "smc", behavior: { type: "linear", stiffness: k, stepDamping: 0.5 } },
      box,
    );
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    const expected = (MASS * G) / (N * k);
    expect(Math.abs(depth / expected - 1), `depth ${depth} m`).toBeLessThan(5e-4);
  });

  it("smc, a law per unit area: rests at m g/(k N A), A the bottom face over its 24 rim samples", () => {
    const k = 1e8;
    const { depth, force } = capsuleOnStiffBlock(
      {
        method: "smc",
        behavior: { type: "linear", stiffness: k, perUnitArea: true, stepDamping: 0.5 },
      },
      box,
    );
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    // the bottom face, 1.1 × 0.1 m, shared among the 2 (1 + 11) samples of its rim; the side
    // faces are edge-on to the normal
    const A = (1.1 * 0.1) / 24;
    const expected = (MASS * G) / (k * N * A);
    expect(Math.abs(depth / expected - 1), `depth ${depth} m`).toBeLessThan(5e-4);
  });

  it("nsc moreau-jean: rests on the face (depth within the projection's tolerance), forces m g", () => {
    const { depth, force, sim } = capsuleOnStiffBlock({ method: "nsc", restitution: 0 }, box);
    expect(Math.abs(force / (MASS * G) - 1), `force ${force} N`).toBeLessThan(1e-6);
    // 2e-3 ℓ, ℓ = 0.05 m its smallest half extent
    expect(Math.abs(depth), `depth ${depth} m`).toBeLessThan(1e-4);
    const samples = sim.state().contacts.filter((c) => c.bodies.includes("shape")).length;
    expect(samples).toBe(N);
  });
});
