/**
 * Contact benchmark, scene S1 "spheres" of /work/shared/BENCH-SCENES.md: N spheres
 * (radius 0.05 m, mass 0.1 kg, inertia 2/5 m r², friction 0.5, restitution 0) dropped in a
 * 1 m × 1 m box (ground plane z = 0 and four walls x, y = ±0.5, inward normals), h = 1/240,
 * nonsmooth contact (Moreau–Jean θ = 1/2, the model's default contact solver PGS).
 * Protocol: 100 warm-up steps, then 1000 timed steps (each timed with
 * process.hrtime.bigint()); reported: mean and median ms/step, steps/s, contacts per step
 * (mean, and after the last step), the mean sphere height, and the shares of the step time
 * spent in broad phase, narrow phase, the Delassus assembly, the nonsmooth solver and the
 * rest (smooth dynamics: forces, iteration matrix, linear solve, state update).
 *
 *   runContactBench({ sizes: [100, 1000] }) → rows (and prints a table)
 */
import type { ModelInput } from "../schemas/model";
import { loadModel } from "../src/engine/index";
import { mulberry32 } from "../test/support/random";

export interface SpheresOptions {
  n: number;
  contactSolver?: "pgs" | "lemke" | "apgd" | "pjacobi" | "barzilai-borwein";
  maxIterations?: number;
  tolerance?: number;
}

/** The S1 scene as a model (layers of 10 × 10, jitter ±2 mm from mulberry32(12345)). */
export function spheresModel(o: SpheresOptions): ModelInput {
  const r = 0.05;
  const m = 0.1;
  const I = 0.4 * m * r * r;
  const rand = mulberry32(12345);
  const bodies: NonNullable<ModelInput["bodies"]> = [];
  const layers = Math.ceil(o.n / 100);
  let count = 0;
  for (let k = 0; k < layers && count < o.n; k++)
    for (let j = 0; j < 10 && count < o.n; j++)
      for (let i = 0; i < 10 && count < o.n; i++) {
        const jx = (rand() * 2 - 1) * 0.002;
        const jy = (rand() * 2 - 1) * 0.002;
        const clamp = (x: number) => Math.max(-0.45, Math.min(0.45, x));
        bodies.push({
          id: `s${count}`,
          mass: m,
          inertia: [I, I, I],
          position: [
            clamp(-0.45 + 0.1 * i + jx),
            clamp(-0.45 + 0.1 * j + jy),
            0.1 + 0.2 * k + 0.1 * ((i + j) % 2),
          ],
          shapes: [{ type: "sphere", radius: r }],
        });
        count++;
      }
  bodies.push({
    id: "box",
    fixed: true,
    shapes: [
      { type: "plane", normal: [0, 0, 1], offset: 0 },
      { type: "plane", normal: [1, 0, 0], offset: -0.5 },
      { type: "plane", normal: [-1, 0, 0], offset: -0.5 },
      { type: "plane", normal: [0, 1, 0], offset: -0.5 },
      { type: "plane", normal: [0, -1, 0], offset: -0.5 },
    ],
  });
  return {
    name: `spheres-${o.n}`,
    gravity: [0, 0, -9.81],
    bodies,
    contact: { method: "nsc", friction: 0.5, restitution: 0 },
    solver: {
      integrator: "moreau-jean",
      dt: 1 / 240,
      theta: 0.5,
      contactSolver: o.contactSolver ?? "pgs",
      maxIterations: o.maxIterations ?? 200,
      tolerance: o.tolerance ?? 1e-10,
    },
  };
}

export interface ContactBenchRow {
  scene: string;
  solver: string;
  "ms/step": number;
  "median ms": number;
  "steps/s": number;
  "contacts/step": number;
  "contacts (last)": number;
  "mean height (m)": number;
  "solver its/step": number;
  "broad %": number;
  "narrow %": number;
  "assembly %": number;
  "solver %": number;
  "other %": number;
}

export interface ContactBenchOptions {
  sizes?: number[];
  warmup?: number;
  steps?: number;
  contactSolver?: SpheresOptions["contactSolver"];
  maxIterations?: number;
  print?: boolean;
}

function round(x: number, d = 3): number {
  return Number(x.toPrecision(d));
}

/** Runs S1 for each size and returns (and prints) one row per size. */
export function runContactBench(o: ContactBenchOptions = {}): ContactBenchRow[] {
  const rows: ContactBenchRow[] = [];
  for (const n of o.sizes ?? [100, 1000]) {
    const sim = loadModel(
      spheresModel({ n, contactSolver: o.contactSolver, maxIterations: o.maxIterations }),
    );
    sim.step(o.warmup ?? 100);
    const nsc = sim.contactModel?.nonsmooth;
    if (!nsc) throw new Error("S1 uses nonsmooth contact");
    const st = nsc.stats;
    const s0 = { ...st };
    const steps = o.steps ?? 1000;
    const times = new Float64Array(steps);
    let contacts = 0;
    let iterations = 0;
    for (let k = 0; k < steps; k++) {
      const t0 = process.hrtime.bigint();
      sim.step(1);
      times[k] = Number(process.hrtime.bigint() - t0) / 1e6;
      contacts += nsc.stats.active;
      iterations += nsc.stats.iterations;
    }
    const total = times.reduce((a, b) => a + b, 0);
    const sorted = Float64Array.from(times).sort();
    const state = sim.state();
    const spheres = state.bodies.filter((b) => b.id !== "box");
    const share = (x: number) => round((100 * x) / total, 3);
    const broad = st.broadMs - s0.broadMs;
    const narrow = st.narrowMs - s0.narrowMs;
    const assembly = st.assemblyMs - s0.assemblyMs;
    const solver = st.solverMs - s0.solverMs;
    rows.push({
      scene: `S1 spheres N=${n}`,
      solver: sim.solver.contactSolver,
      "ms/step": round(total / steps),
      "median ms": round(sorted[Math.floor(steps / 2)]),
      "steps/s": round((1000 * steps) / total),
      "contacts/step": round(contacts / steps),
      "contacts (last)": state.contacts.length,
      "mean height (m)": round(spheres.reduce((a, b) => a + b.position[2], 0) / spheres.length, 4),
      "solver its/step": round(iterations / steps),
      "broad %": share(broad),
      "narrow %": share(narrow),
      "assembly %": share(assembly),
      "solver %": share(solver),
      "other %": share(total - broad - narrow - assembly - solver),
    });
  }
  if (o.print !== false) {
    console.log("\n## Contact, S1 spheres (Moreau–Jean, h = 1/240, issue 4)");
    console.table(rows);
  }
  return rows;
}

if (process.argv[1]?.endsWith("contact.ts")) {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((x) => x > 0);
  runContactBench({ sizes: sizes.length ? sizes : undefined });
}
