/**
 * Benchmark scenes as model JSON, built from one description (../shared/BENCH-SCENES.md
 * for S1–S3). Used by bench/run.ts and kept building by test/bench/scenes.test.ts.
 */
import type { ModelInput } from "../schemas/model";
import { s2Chain } from "../test/support/models";
import { toMoreauModel } from "./compare/engines/moreau";
import { spheresScene } from "./compare/scene";

export interface ClothOptions {
  /** Particles per side. */
  n: number;
  /** Side length (m). */
  size?: number;
  totalMass?: number;
  stiffness?: number;
  damping?: number;
  dt?: number;
  /** Which particles are fixed: "row" (the row y = 0, as S3) or "corners" (two corners). */
  pin?: "row" | "corners";
  integrator?: "newmark" | "backward-euler" | "symplectic-euler";
}

/**
 * A horizontal mass-spring cloth at z = 0 spanning [0, size]², with structural
 * (4-neighbour) and shear (both diagonals) springs at their initial lengths; springs with
 * both ends fixed are left out.
 */
export function clothModel(o: ClothOptions): ModelInput {
  const { n } = o;
  const size = o.size ?? 1;
  const spacing = size / (n - 1);
  const mass = (o.totalMass ?? 1) / (n * n);
  const fixed = (i: number, j: number) =>
    o.pin === "corners" ? j === 0 && (i === 0 || i === n - 1) : j === 0;
  const id = (i: number, j: number) => `p${i}_${j}`;
  const bodies = [];
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++)
      bodies.push({
        id: id(i, j),
        kind: "particle" as const,
        mass,
        fixed: fixed(i, j),
        position: [i * spacing, j * spacing, 0] as [number, number, number],
      });
  const forces: ModelInput["forces"] = [];
  const link = (i0: number, j0: number, i1: number, j1: number) => {
    if (i1 < 0 || i1 >= n || j1 >= n) return;
    if (fixed(i0, j0) && fixed(i1, j1)) return;
    forces.push({
      id: `s${forces.length}`,
      type: "spring",
      a: { body: id(i0, j0) },
      b: { body: id(i1, j1) },
      stiffness: o.stiffness ?? 10,
      damping: o.damping ?? 0.01,
    });
  };
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      link(i, j, i + 1, j);
      link(i, j, i, j + 1);
      link(i, j, i + 1, j + 1);
      link(i, j, i - 1, j + 1);
    }
  return {
    name: `cloth-${n}x${n}`,
    gravity: [0, 0, -9.81],
    bodies,
    forces,
    solver: {
      dt: o.dt ?? 1 / 240,
      ...(o.integrator === undefined || o.integrator === "newmark"
        ? { integrator: "newmark" as const, beta: 0.25, gamma: 0.5 }
        : { integrator: o.integrator }),
    },
  };
}

export interface ChainOptions {
  /** Number of links. */
  links: number;
  dt?: number;
  integrator?: "newmark" | "backward-euler" | "symplectic-euler" | "moreau-jean";
  newtonIterations?: number;
}

/**
 * S2 "chain": L rigid links, boxes 0.1 × 0.02 × 0.02 m along x, 0.1 kg, spherical joints
 * end to end, joint 0 at the fixed point (0, 0, 0); straight along +x at rest at t = 0.
 */
export function chainModel(o: ChainOptions): ModelInput {
  const { bodies, joints } = s2Chain(o.links);
  return {
    name: `chain-${o.links}`,
    gravity: [0, 0, -9.81],
    bodies,
    joints,
    solver: {
      integrator: o.integrator ?? "newmark",
      dt: o.dt ?? 1 / 240,
      newtonIterations: o.newtonIterations ?? 1,
    },
  };
}

/**
 * S1 "spheres" (N = 100 · layers) as a Moreau model: built from the engine-neutral
 * description that every engine of the comparison uses (bench/compare/scene.ts), with
 * Moreau–Jean time-stepping and nonsmooth contact (friction 0.5, restitution 0).
 */
export function spheresModel(n: number): ModelInput {
  return toMoreauModel(spheresScene(n));
}
