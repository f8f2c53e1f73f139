/**
 * The `fem` entry of the model format through loadModel: validation (errors naming their
 * path), the nodes as particles "<fem id>/<k>" with lumped masses, fixed nodes and faces,
 * node references in forces and sensors, attachments to bodies as spherical joints,
 * gravity on the node masses, energy with and without Rayleigh damping, and snapshots.
 */
import { describe, expect, it } from "vitest";
import { loadModel, loadSnapshot, ModelError } from "../../../../src/engine/index";

const block = (extra: Record<string, unknown> = {}) => ({
  id: "jelly",
  box: { size: [0.2, 0.1, 0.1], resolution: [2, 1, 1], center: [0, 0, 1] },
  density: 1000,
  youngModulus: 1e5,
  poissonRatio: 0.3,
  ...extra,
});

/** One tetrahedron (inline mesh), its last two nodes swapped: negatively oriented. */
const tetMesh = {
  nodes: [
    [0, 0, 0],
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ],
  elements: [[0, 1, 3, 2]],
};

function issues(model: unknown): { path: (string | number)[]; message: string }[] {
  try {
    loadModel(model);
  } catch (err) {
    if (err instanceof ModelError) return err.issues;
    throw err;
  }
  return [];
}

const ground = { id: "ground-plate", fixed: true };

describe("fem model format: validation", () => {
  it("a valid box and an inline mesh load; a negatively oriented element is turned", () => {
    expect(issues({ bodies: [ground], fem: [block()] })).toEqual([]);
    const sim = loadModel({
      bodies: [ground],
      fem: [{ id: "tet", ...tetMesh, density: 600, youngModulus: 1e6 }],
    });
    // V = 1/6, lumped ρV/4 per node
    for (let k = 0; k < 4; k++)
      expect(sim.system.mass[sim.system.index.get(`tet/${k}`) ?? -1]).toBeCloseTo(25, 12);
  });

  it("errors name the fem body, the field and the index", () => {
    const cases: [unknown, (string | number)[], RegExp][] = [
      [
        { fem: [block({ nodes: tetMesh.nodes, elements: tetMesh.elements })] },
        ["fem", 0],
        /not both/,
      ],
      [{ fem: [{ ...block(), box: undefined }] }, ["fem", 0], /nodes and elements .* or box/],
      [{ fem: [block({ colour: "red" })] }, ["fem", 0], /Unrecognized key/],
      [
        {
          fem: [
            {
              id: "t",
              nodes: tetMesh.nodes,
              elements: [[0, 1, 2, 7]],
              density: 1,
              youngModulus: 1,
            },
          ],
        },
        ["fem", 0, "elements", 0, 3],
        /refers to node 7/,
      ],
      [
        {
          fem: [
            {
              id: "t",
              nodes: [...tetMesh.nodes, [2, 2, 2]],
              elements: tetMesh.elements,
              density: 1,
              youngModulus: 1,
            },
          ],
        },
        ["fem", 0, "nodes", 4],
        /belongs to no element/,
      ],
      [
        {
          fem: [
            {
              id: "t",
              nodes: [
                [0, 0, 0],
                [1, 0, 0],
                [2, 0, 0],
                [0, 1, 0],
              ],
              elements: [[0, 1, 2, 3]],
              density: 1,
              youngModulus: 1,
            },
          ],
        },
        ["fem", 0, "elements", 0],
        /degenerate/,
      ],
      [{ fem: [block({ fixedNodes: [0, 12] })] }, ["fem", 0, "fixedNodes", 1], /no node 12/],
      [
        { fem: [{ id: "t", ...tetMesh, density: 1, youngModulus: 1, fixedFaces: ["-x"] }] },
        ["fem", 0, "fixedFaces"],
        /box/,
      ],
      [
        { fem: [block({ material: "stvk", tangent: "approximate" })] },
        ["fem", 0, "tangent"],
        /corotational/,
      ],
      [{ fem: [block({ poissonRatio: 0.5 })] }, ["fem", 0, "poissonRatio"], /.+/],
      [{ fem: [block({ id: "ground-plate" })] }, ["fem", 0, "id"], /duplicate id/],
      [
        { fem: [block({ attachments: [{ node: 1, body: "crane" }] })] },
        ["fem", 0, "attachments", 0, "body"],
        /unknown body "crane"/,
      ],
      [
        { fem: [block({ fixedFaces: ["+z"], attachments: [{ node: 7, body: "ground-plate" }] })] },
        ["fem", 0, "attachments", 0, "body"],
        /node 7 is fixed and "ground-plate" cannot move/,
      ],
      [
        { fem: [block({ attachments: [{ node: 7, body: "jelly/7" }] })] },
        ["fem", 0, "attachments", 0, "body"],
        /to itself/,
      ],
      [
        {
          fem: [block()],
          forces: [{ id: "f", type: "pointForce", at: { body: "jelly/12" }, force: [0, 0, 1] }],
        },
        ["forces", 0, "at", "body"],
        /node 12 of fem "jelly", which has 12 nodes/,
      ],
      [
        {
          fem: [block()],
          sensors: [{ id: "s", type: "bodyPosition", body: "jam/3" }],
        },
        ["sensors", 0, "body"],
        /unknown body "jam\/3"/,
      ],
    ];
    for (const [partial, path, message] of cases) {
      const found = issues({ bodies: [ground], ...(partial as object) });
      const hit = found.find((i) => JSON.stringify(i.path) === JSON.stringify(path));
      expect(hit, `${JSON.stringify(path)} in ${JSON.stringify(found)}`).toBeDefined();
      expect(hit?.message).toMatch(message);
    }
  });
});

describe("fem model format: building and running", () => {
  it("nodes are particles <id>/<k> after the bodies; masses sum to ρV; fixedFaces fix nodes", () => {
    const sim = loadModel({
      bodies: [ground],
      fem: [block({ fixedFaces: ["-x"], fixedNodes: [5] })],
    });
    const s = sim.system;
    expect(s.numBodies).toBe(1 + 12);
    expect(s.ids.slice(0, 3)).toEqual(["ground-plate", "jelly/0", "jelly/1"]);
    let mass = 0;
    for (let k = 0; k < 12; k++) mass += s.mass[k + 1];
    // the fixed nodes carry no mass in the system; the dynamic ones theirs
    const fixed = [0, 3, 6, 9, 5]; // i = 0 face (node = i + 3 (j + 2 k)) and node 5
    for (let k = 0; k < 12; k++) expect(s.dofOffset[k + 1] < 0).toBe(fixed.includes(k));
    expect(mass).toBeGreaterThan(0);
    const free = loadModel({ bodies: [ground], fem: [block()] }).system;
    let total = 0;
    for (let k = 0; k < 12; k++) total += free.mass[k + 1];
    expect(total).toBeCloseTo(1000 * 0.2 * 0.1 * 0.1, 12);
    // the State lists the nodes as bodies
    const state = sim.state();
    expect(state.bodies.map((b) => b.id)).toContain("jelly/11");
  });

  it("gravity acts on the node masses: a free soft block falls with g, undeformed", () => {
    const sim = loadModel({
      bodies: [ground],
      fem: [block({ velocity: [1, 0, 0] })],
      solver: { integrator: "newmark", dt: 0.01 },
    });
    const s = sim.system;
    const x0 = Float64Array.from(s.pos);
    sim.step(20);
    const t = sim.time;
    for (let k = 1; k <= 12; k++) {
      expect(s.pos[3 * k] - x0[3 * k]).toBeCloseTo(t, 10);
      expect(s.pos[3 * k + 2] - x0[3 * k + 2]).toBeCloseTo(-0.5 * 9.81 * t * t, 10);
      expect(s.vel[3 * k + 2]).toBeCloseTo(-9.81 * t, 10);
    }
  });

  // Under the trapezoidal rule (moreau-jean at θ = ½, generalized-alpha at ρ∞ = 1, newmark
  // through it) the damped body comes to rest inside the energy–momentum force's step:
  // Gonzalez's correction, a difference of energies over ΔC : ΔC, was rounding's there and
  // its noise kept Newton from converging (moreau-jean failed at step 181 even halved four
  // times; fem-effector.ts MEAN_ROUNDING)
  for (const integrator of ["newmark", "moreau-jean", "generalized-alpha"])
    it(`forces and sensors name nodes; a pointForce on a node stretches the body (${integrator})`, () => {
      const sim = loadModel({
        bodies: [ground],
        gravity: [0, 0, 0],
        fem: [block({ fixedFaces: ["-x"] })],
        forces: [{ id: "pull", type: "pointForce", at: { body: "jelly/2" }, force: [5, 0, 0] }],
        sensors: [{ id: "tip", type: "bodyPosition", body: "jelly/2" }],
        solver: { integrator, dt: 0.002, rayleighMass: 50 },
      });
      const x0 = sim.state().observation?.[0] ?? Number.NaN;
      sim.step(300);
      const x = sim.state().observation?.[0] ?? Number.NaN;
      expect(x).toBeGreaterThan(x0 + 1e-5);
      expect(sim.state().solver.newtonConverged).toBe(true);
    });

  it("attachments hold nodes at body points: a soft block hangs from a ceiling, reactions = weight", () => {
    const sim = loadModel({
      bodies: [{ id: "ceiling", fixed: true, position: [0, 0, 1.05] }],
      fem: [
        block({
          // the four top nodes (k = 1: z = 1.05) of the middle and end columns
          attachments: [6, 7, 8, 9, 10, 11].map((node) => ({ node, body: "ceiling" })),
        }),
      ],
      solver: { integrator: "newmark", dt: 0.005, rayleighMass: 40 },
    });
    sim.step(400);
    const state = sim.state();
    const joints = state.joints.filter((j) => j.id.startsWith("jelly/attachment/"));
    expect(joints).toHaveLength(6);
    const weight = 1000 * 0.002 * 9.81;
    // the attachments carry the whole weight (the attached nodes' own weight included)
    const lift = joints.reduce((s, j) => s + j.force[2], 0);
    expect(lift / weight).toBeCloseTo(1, 4);
    // the attached nodes did not move
    for (const node of [6, 7, 8, 9, 10, 11]) {
      const b = state.bodies.find((x) => x.id === `jelly/${node}`);
      expect(b?.position[2]).toBeCloseTo(1.05, 9);
    }
  });

  it("an attachment to a swinging rigid body follows its point", () => {
    const sim = loadModel({
      bodies: [{ id: "arm", mass: 2, position: [0.3, 0, 1.05], inertia: [0.01, 0.05, 0.05] }],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 1.05] },
          b: { body: "arm", point: [-0.3, 0, 0] },
          axis: [0, 1, 0],
        },
      ],
      fem: [
        block({
          attachments: [
            { node: 9, body: "arm" },
            { node: 10, body: "arm" },
          ],
        }),
      ],
      solver: { integrator: "generalized-alpha", dt: 0.002 },
    });
    sim.step(100);
    const s = sim.system;
    const arm = s.index.get("arm") ?? -1;
    const node = s.index.get("jelly/9") ?? -1;
    // the arm has swung; the node is at the arm's point where it was attached: node 9 at
    // (−0.1, 0.05, 1.05), the arm's centre at (0.3, 0, 1.05)
    expect(s.pos[3 * arm + 2]).toBeLessThan(1.04);
    const R = s.rotation.subarray(9 * arm, 9 * arm + 9);
    const p = [-0.4, 0.05, 0];
    for (let i = 0; i < 3; i++) {
      const w = s.pos[3 * arm + i] + R[3 * i] * p[0] + R[3 * i + 1] * p[1] + R[3 * i + 2] * p[2];
      expect(s.pos[3 * node + i]).toBeCloseTo(w, 8);
    }
  });

  it("undamped free vibration keeps its energy (Newmark ¼, ½, converged Newton); Rayleigh damping removes it", () => {
    // Rayleigh stiffness damping r_K K v with K the element tangent stiffness. With it, this
    // stiff beam's Newton corrections stall at ~3e-10 m/s², the rounding of the positions
    // through the stiffness (ε (1 + ‖x‖) / h²β ≈ 2e-9 m/s² at most), just above the default
    // newtonTolerance 1e-10 (1 + ‖a‖); Newton's test allows for that floor (the fem
    // effector's roundingBound), so the damped run converges at the default tolerance
    // (it failed at step 377 before, even with the step halved four times).
    const model = (rayleighStiffness: number) => ({
      bodies: [ground],
      gravity: [0, 0, -9.81],
      fem: [
        {
          id: "beam",
          box: { size: [1, 0.1, 0.1], resolution: [10, 1, 1], center: [0.5, 0, 0] },
          density: 1000,
          youngModulus: 1e8,
          poissonRatio: 0.3,
          fixedFaces: ["-x"],
        },
      ],
      solver: {
        integrator: "newmark",
        dt: 0.001,
        rayleighStiffness,
      },
    });
    const free = loadModel(model(0));
    const e0 = free.state().energy.total;
    let worst = 0;
    let swing = 0;
    for (let k = 0; k < 10; k++) {
      free.step(100);
      const st = free.state();
      worst = Math.max(worst, Math.abs(st.energy.total - e0));
      swing = Math.max(swing, st.energy.kinetic);
    }
    // measured: 9.6e-8
    expect(swing).toBeGreaterThan(0.05);
    expect(worst / swing).toBeLessThan(1e-6);

    const damped = loadModel(model(2e-3));
    let last = damped.state().energy.total;
    for (let k = 0; k < 10; k++) {
      damped.step(100);
      const st = damped.state();
      expect(st.solver.newtonConverged).toBe(true);
      expect(st.solver.newtonIterations).toBeLessThan(6);
      const e = st.energy.total;
      expect(e).toBeLessThan(last);
      last = e;
    }
    expect(e0 - last).toBeGreaterThan(0.5 * swing);
  });

  it("a snapshot continues bit-identically", () => {
    const a = loadModel({
      bodies: [ground],
      fem: [block({ fixedFaces: ["-x"], material: "neo-hookean" })],
      solver: { integrator: "newmark", dt: 0.002 },
    });
    a.step(30);
    const b = loadSnapshot(JSON.parse(JSON.stringify(a.snapshot())));
    a.step(30);
    b.step(30);
    expect(b.stateHash()).toBe(a.stateHash());
  });
});
