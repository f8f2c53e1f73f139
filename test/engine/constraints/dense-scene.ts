/**
 * The dense references of the constraint-set, schur and project tests: a scene of every
 * joint type and both motors over rigid, particle and fixed bodies, and the dense M, G,
 * M⁻¹B (Gaussian elimination) and S = G M⁻¹ Gᵀ it is checked against.
 */
import type { JointSpec, MotorSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import type { MassSchurComplement } from "../../../src/engine/constraints/schur";
import { type CsrMatrix, csrToDense } from "../../../src/engine/math/csr";
import { BodyKind, type BodySystem } from "../../../src/engine/model/body-system";
import { solveDense } from "../../support/dense-solve";
import { mulberry32 } from "../../support/random";
import { randomBody, system } from "./helpers";

/** With `weld` the set is over-determined (R2 fixed twice), without it regular. */
export function scene(seed: number, weld = true) {
  const r = mulberry32(seed);
  const sys = system([
    randomBody(r, "R1", "rigid"),
    randomBody(r, "R2", "rigid"),
    randomBody(r, "P1", "particle"),
    randomBody(r, "F", "fixed"),
    randomBody(r, "R3", "rigid"),
  ]);
  const pt = (b: string, x: number, y: number, z: number) => ({
    body: b,
    point: [x, y, z] as [number, number, number],
  });
  const joints: JointSpec[] = [
    {
      id: "hinge",
      type: "revolute",
      a: pt("ground", 0, 0, 0),
      b: pt("R1", 0.1, 0.2, 0),
      axis: [0, 0.6, 0.8],
    },
    { id: "ball", type: "spherical", a: pt("R1", 0.3, 0, 0), b: pt("R2", -0.2, 0, 0.1) },
    { id: "rope", type: "distance", a: pt("R2", 0, 0.1, 0), b: pt("P1", 0, 0, 0) },
    {
      id: "slide",
      type: "prismatic",
      a: pt("F", 0, 0, 0.2),
      b: pt("R3", 0.1, 0, 0),
      axis: [1, 1, 0],
    },
    ...(weld
      ? [
          {
            id: "weld",
            type: "fixed",
            a: pt("R3", 0, 0.2, 0),
            b: pt("R2", 0, 0, -0.1),
          } as JointSpec,
        ]
      : []),
    { id: "tether", type: "distance", a: pt("P1", 0, 0, 0), b: pt("ground", 1, 2, 3) },
  ];
  const motors: MotorSpec[] = [
    { id: "spin", joint: "hinge", angle: { offset: 0, rate: 3 } },
    {
      id: "push",
      joint: "slide",
      offset: { type: "sine", amplitude: 0.1, frequency: 2, phase: 0, offset: 0 },
    },
  ];
  const set = new ConstraintSet(sys, createConstraints(joints, motors, sys));
  return { sys, set, r };
}

export function denseMass(sys: BodySystem): number[][] {
  const n = sys.numDofs;
  const M = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0) continue;
    for (let i = 0; i < 3; i++) M[d + i][d + i] = sys.mass[b];
    if (sys.kind[b] === BodyKind.RIGID)
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) M[d + 3 + i][d + 3 + j] = sys.inertiaWorld[9 * b + 3 * i + j];
  }
  return M;
}

export function denseG(set: ConstraintSet): number[][] {
  const g = csrToDense(set.G);
  return Array.from({ length: set.numRows }, (_, i) =>
    Array.from(g.subarray(i * set.numDofs, (i + 1) * set.numDofs)),
  );
}

/** X = M⁻¹ B column by column (dense). */
export function massSolveCols(M: number[][], B: number[][]): number[][] {
  const n = M.length;
  const cols = B[0]?.length ?? 0;
  const out = Array.from({ length: n }, () => new Array<number>(cols).fill(0));
  for (let j = 0; j < cols; j++) {
    const x = solveDense(
      M,
      B.map((row) => row[j]),
    );
    for (let i = 0; i < n; i++) out[i][j] = x[i];
  }
  return out;
}

export const transpose = (A: number[][]) => A[0].map((_, j) => A.map((row) => row[j]));
export const matmul = (A: number[][], B: number[][]) =>
  A.map((row) => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));

/** S = G M⁻¹ Gᵀ's lower triangle in S.values: updateInto with S's own entries as slots. */
export function schurValues(schur: MassSchurComplement): CsrMatrix {
  const S = schur.S;
  S.values.fill(0);
  schur.updateInto(
    S.values,
    Int32Array.from(S.values, (_, p) => p),
  );
  return S;
}
