/**
 * The slider-crank of slider-crank-fixture.ts as an engine model: three rigid bodies with
 * full 3-D joints (so 3 of the 21 constraint rows are redundant), gravity along −y.
 *   j1 revolute ground(0,0,0) – crank(−r/2,0,0), axis z
 *   j2 revolute crank(r/2,0,0) – rod(−L/2,0,0), axis z
 *   j3 revolute rod(L/2,0,0) – slider(0,0,0), axis z
 *   j4 prismatic ground(0,0,0) – slider(0,0,0), axis x
 *   m1 crank motor on j1 (angle) or m4 slider motor on j4 (offset)
 * Each body's frame has its x axis along the link. Ixx of the thin rods (irrelevant to the
 * planar motion) is set to a tenth of Iyy = Izz so that the inertia is positive definite.
 */
import type { JointSpec, MotorSpec, TimeFunctionSpec } from "../../../schemas/model";
import type { AssemblyOptionsSpec } from "../../../schemas/state";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { BodySystem } from "../../../src/engine/model/body-system";
import { G, I1, I2, L, M1, M2, M3, R, type SliderCrankSolution } from "./slider-crank-fixture";

export const zQuat = (a: number): [number, number, number, number] => [
  Math.cos(a / 2),
  0,
  0,
  Math.sin(a / 2),
];

const z: [number, number, number] = [0, 0, 1];

/** The four joints of the header (j1–j4), each body's x axis along its link. */
export const SLIDER_CRANK_JOINTS: JointSpec[] = [
  {
    id: "j1",
    type: "revolute",
    a: { body: "ground", point: [0, 0, 0] },
    b: { body: "crank", point: [-R / 2, 0, 0] },
    axis: z,
  },
  {
    id: "j2",
    type: "revolute",
    a: { body: "crank", point: [R / 2, 0, 0] },
    b: { body: "rod", point: [-L / 2, 0, 0] },
    axis: z,
  },
  {
    id: "j3",
    type: "revolute",
    a: { body: "rod", point: [L / 2, 0, 0] },
    b: { body: "slider", point: [0, 0, 0] },
    axis: z,
  },
  {
    id: "j4",
    type: "prismatic",
    a: { body: "ground", point: [0, 0, 0] },
    b: { body: "slider", point: [0, 0, 0] },
    axis: [1, 0, 0],
  },
];

export interface BuildOptions {
  /** Crank drive θ(t) (default {offset 0, rate 10}) or slider drive s(t). */
  crankDrive?: TimeFunctionSpec;
  sliderDrive?: TimeFunctionSpec;
  /** Mis-assembly of the initial guess: rod angle (rad) and slider x (m) offsets. */
  rodAngleError?: number;
  sliderError?: number;
  /** Start from the closed-form velocities instead of zero. */
  withVelocities?: boolean;
}

export function buildSliderCrank(sol: SliderCrankSolution, o: BuildOptions = {}) {
  const v3 = (p: [number, number]): [number, number, number] => [p[0], p[1], 0];
  const I3 = 1e-3;
  const withV = o.withVelocities ?? false;
  const sys: BodySystem = new BodySystem([
    {
      id: "crank",
      kind: "rigid",
      fixed: false,
      mass: M1,
      inertia: [I1 / 10, 0, 0, 0, I1, 0, 0, 0, I1],
      position: v3(sol.crank.x),
      orientation: zQuat(sol.crank.angle),
      velocity: withV ? v3(sol.crank.v) : [0, 0, 0],
      angularVelocity: withV ? [0, 0, sol.crank.omega] : [0, 0, 0],
    },
    {
      id: "rod",
      kind: "rigid",
      fixed: false,
      mass: M2,
      inertia: [I2 / 10, 0, 0, 0, I2, 0, 0, 0, I2],
      position: v3(sol.rod.x),
      orientation: zQuat(sol.rod.angle + (o.rodAngleError ?? 0)),
      velocity: withV ? v3(sol.rod.v) : [0, 0, 0],
      angularVelocity: withV ? [0, 0, sol.rod.omega] : [0, 0, 0],
    },
    {
      id: "slider",
      kind: "rigid",
      fixed: false,
      mass: M3,
      inertia: [I3, 0, 0, 0, I3, 0, 0, 0, I3],
      position: [sol.slider.x[0] + (o.sliderError ?? 0), 0, 0],
      orientation: [1, 0, 0, 0],
      velocity: withV ? v3(sol.slider.v) : [0, 0, 0],
      angularVelocity: [0, 0, 0],
    },
  ]);
  const motors: MotorSpec[] = [];
  if (o.sliderDrive !== undefined) motors.push({ id: "m4", joint: "j4", offset: o.sliderDrive });
  else motors.push({ id: "m1", joint: "j1", angle: o.crankDrive ?? { offset: 0, rate: 10 } });
  const set = new ConstraintSet(sys, createConstraints(SLIDER_CRANK_JOINTS, motors, sys));
  return { sys, set };
}

/** Gravity (0, −g, 0) and the gyroscopic torque −ω × (I ω), [f; τ] per dof. */
export function gravityAndGyroscopic(sys: BodySystem) {
  return (_t: number, out: Float64Array) => {
    out.fill(0);
    for (let b = 0; b < sys.numBodies; b++) {
      const d = sys.dofOffset[b];
      if (d < 0) continue;
      out[d + 1] = -G * sys.mass[b];
      if (sys.kind[b] !== 2) continue;
      const w = sys.omega.subarray(3 * b, 3 * b + 3);
      const I = sys.inertiaWorld.subarray(9 * b, 9 * b + 9);
      const h = [0, 1, 2].map((i) => I[3 * i] * w[0] + I[3 * i + 1] * w[1] + I[3 * i + 2] * w[2]);
      out[d + 3] = -(w[1] * h[2] - w[2] * h[1]);
      out[d + 4] = -(w[2] * h[0] - w[0] * h[2]);
      out[d + 5] = -(w[0] * h[1] - w[1] * h[0]);
    }
  };
}

export const defaultOptions = (over: Partial<AssemblyOptionsSpec> = {}): AssemblyOptionsSpec => ({
  levels: ["position", "velocity", "acceleration"],
  maxIterations: 20,
  relTolerance: 1e-10,
  absTolerance: 1e-12,
  residualTolerance: 1e-10,
  solver: "sparse-qr",
  ...over,
});
