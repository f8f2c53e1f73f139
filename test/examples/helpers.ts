/**
 * Shared pieces of the example tests: rigid-body kinematics written out here (world points,
 * rotation angles) and mechanical energy computed from the model's masses and inertias and
 * a State, independently of the engine's own figure. Reading examples/*.json is
 * test/support/examples.ts.
 */
import type { BodyStateOut, StateOut } from "../../schemas/state";
import type { ExampleModel } from "../support/examples";
import { type Q4 as Q, rotate, type V3 } from "../support/quat";

/** World position of a point given in a body's frame ("ground": the point itself). */
export function worldPoint(
  st: StateOut,
  body: string | undefined,
  p: V3 | number[] = [0, 0, 0],
): V3 {
  if (body === undefined || body === "ground") return [p[0], p[1], p[2]];
  const b = bodyOf(st, body);
  const r = rotate(b.orientation, p);
  return [b.position[0] + r[0], b.position[1] + r[1], b.position[2] + r[2]];
}

export function bodyOf(st: StateOut, id: string): BodyStateOut {
  const b = st.bodies.find((x) => x.id === id);
  if (!b) throw new Error(`no body ${id} in the state`);
  return b;
}

export const dist = (a: number[], b: number[]) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
export const norm = (a: number[]) => Math.hypot(a[0], a[1], a[2]);
const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/**
 * Kinetic + gravitational + spring energy of a state, from the model: ½ m v² + ½ ωᵀ I_w ω
 * with I_w = R diag(I) Rᵀ (ωᵀ I_w ω = (Rᵀω)ᵀ diag(I) (Rᵀω)), − m g·x, and ½ k (ℓ − ℓ₀)²
 * per spring (ℓ₀ the rest length, default the initial length).
 */
export function mechanicalEnergy(model: ExampleModel, st: StateOut, initial?: StateOut): number {
  const g = model.gravity ?? [0, 0, -9.81];
  let e = 0;
  for (const b of model.bodies) {
    if (b.fixed) continue;
    const s = bodyOf(st, b.id);
    const m = b.mass ?? 0;
    e += 0.5 * m * dot(s.velocity, s.velocity) - m * dot(g, s.position);
    if ((b.kind ?? "rigid") === "rigid") {
      if (!b.inertia) throw new Error(`body ${b.id}: the test needs an explicit diagonal inertia`);
      const [w, x, y, z] = s.orientation;
      const wb = rotate([w, -x, -y, -z], s.angularVelocity); // Rᵀ ω
      e +=
        0.5 * (b.inertia[0] * wb[0] ** 2 + b.inertia[1] * wb[1] ** 2 + b.inertia[2] * wb[2] ** 2);
    }
  }
  for (const f of model.forces ?? []) {
    if (f.type !== "spring") continue;
    const len = dist(worldPoint(st, f.a.body, f.a.point), worldPoint(st, f.b.body, f.b.point));
    const rest =
      f.restLength ??
      (initial
        ? dist(worldPoint(initial, f.a.body, f.a.point), worldPoint(initial, f.b.body, f.b.point))
        : Number.NaN);
    e += 0.5 * f.stiffness * (len - rest) ** 2;
  }
  return e;
}

/** Every number of a state is finite. */
export function allFinite(st: StateOut): boolean {
  const nums: number[] = [st.time, st.energy.kinetic, st.energy.potential, st.energy.total];
  for (const b of st.bodies)
    nums.push(...b.position, ...b.orientation, ...b.velocity, ...b.angularVelocity);
  for (const c of st.contacts)
    nums.push(...c.point, ...c.normal, c.gap, c.normalForce, ...c.tangentForce);
  for (const j of st.joints) nums.push(...j.force, ...j.torque);
  return nums.every(Number.isFinite);
}

export { ellipticK } from "../support/closed-forms";

/** Rotation angle (rad) of a unit quaternion away from the identity. */
export function rotationAngle(q: Q | number[]): number {
  return 2 * Math.acos(Math.min(1, Math.abs(q[0])));
}
