/**
 * Closed-form reference for a planar slider-crank in the xy plane, independent of the
 * engine: kinematics from the loop-closure equation and planar Newton–Euler inverse
 * dynamics solved for the joint forces and the drive (a small dense elimination).
 *
 *   crank  O = (0,0) → A, length r, mass m₁, angle φ from +x (counter-clockwise), rotating
 *          about z through O; uniform thin rod: I₁ = m₁ r²/12 about its centre.
 *   rod    A → B, length L, mass m₂, angle β: B = A + L(cos β, sin β) on the x axis, so
 *          sin β = −(r/L) sin φ, cos β = +√(1 − sin²β) (slider to the right of O);
 *          I₂ = m₂ L²/12.
 *   slider at B = (x_s, 0), mass m₃, sliding along x: x_s = r cos φ + √(L² − r² sin²φ).
 * Derivatives (φ̇ = ω, φ̈ = α given):
 *   β̇ = −r cos φ ω / (L cos β),
 *   β̈ = [(r/L)(sin φ ω² − cos φ α) + β̇² sin β] / cos β,
 *   ẋ_s = −r sin φ ω − L sin β β̇,   ẍ_s = −r(cos φ ω² + sin φ α) − L(cos β β̇² + sin β β̈).
 * Newton–Euler, gravity (0, −g): with F₁ the force of the crank pivot on the crank, F₂ of
 * the crank pin on the rod (−F₂ on the crank), F₃ of the slider pin on the slider (−F₃ on
 * the rod), (P, N₄) the force of the guide on the slider (P from a slider drive, zero
 * without one) and τ the crank drive torque (zero when the slider is driven):
 *   crank   m₁ a₁ = F₁ − F₂ + m₁g,   I₁ α  = τ + (O − c₁) × F₁ − (A − c₁) × F₂
 *   rod     m₂ a₂ = F₂ − F₃ + m₂g,   I₂ β̈ = (A − c₂) × F₂ − (B − c₂) × F₃
 *   slider  m₃ a₃ = F₃ + (P, N₄) + m₃g
 * (u × F = u_x F_y − u_y F_x): 8 equations for F₁, F₂, F₃, N₄ and τ (or P).
 */
import { solveDense } from "../../support/dense-solve";

export const R = 0.1;
export const L = 0.3;
export const M1 = 1;
export const M2 = 2;
export const M3 = 0.5;
export const G = 9.81;
export const I1 = (M1 * R * R) / 12;
export const I2 = (M2 * L * L) / 12;

export interface PlanarBody {
  /** Centre of mass, its velocity and acceleration (m, m/s, m/s²). */
  x: [number, number];
  v: [number, number];
  a: [number, number];
  /** Angle from +x, angular velocity and acceleration about +z. */
  angle: number;
  omega: number;
  alpha: number;
}

export interface SliderCrankSolution {
  phi: number;
  beta: number;
  crank: PlanarBody;
  rod: PlanarBody;
  slider: PlanarBody;
  /** Joint points. */
  A: [number, number];
  B: [number, number];
  /** Forces (N) on: crank from ground pivot, rod from crank pin, slider from rod pin. */
  F1: [number, number];
  F2: [number, number];
  F3: [number, number];
  /** Guide's normal force on the slider (y) and the slider drive force (x). */
  N4: number;
  P: number;
  /** Crank drive torque about +z (N·m). */
  tau: number;
}

/**
 * Kinematics and inverse dynamics at crank angle phi (rad) with crank rate omega and
 * crank acceleration alpha; `drive` says which drive supplies the effort.
 */
export function sliderCrank(
  phi: number,
  omega: number,
  alpha: number,
  drive: "crank" | "slider" = "crank",
): SliderCrankSolution {
  const sp = Math.sin(phi);
  const cp = Math.cos(phi);
  const sb = (-R / L) * sp;
  const cb = Math.sqrt(1 - sb * sb);
  const beta = Math.atan2(sb, cb);
  const bd = (-R * cp * omega) / (L * cb);
  const bdd = ((R / L) * (sp * omega * omega - cp * alpha) + bd * bd * sb) / cb;
  const xs = R * cp + L * cb;
  const xsd = -R * sp * omega - L * sb * bd;
  const xsdd = -R * (cp * omega * omega + sp * alpha) - L * (cb * bd * bd + sb * bdd);

  const A: [number, number] = [R * cp, R * sp];
  const vA = [-R * sp * omega, R * cp * omega];
  const aA = [-R * (sp * alpha + cp * omega * omega), R * (cp * alpha - sp * omega * omega)];
  const crank: PlanarBody = {
    x: [0.5 * A[0], 0.5 * A[1]],
    v: [0.5 * vA[0], 0.5 * vA[1]],
    a: [0.5 * aA[0], 0.5 * aA[1]],
    angle: phi,
    omega,
    alpha,
  };
  const rod: PlanarBody = {
    x: [A[0] + 0.5 * L * cb, A[1] + 0.5 * L * sb],
    v: [vA[0] - 0.5 * L * sb * bd, vA[1] + 0.5 * L * cb * bd],
    a: [aA[0] + 0.5 * L * (-sb * bdd - cb * bd * bd), aA[1] + 0.5 * L * (cb * bdd - sb * bd * bd)],
    angle: beta,
    omega: bd,
    alpha: bdd,
  };
  const slider: PlanarBody = {
    x: [xs, 0],
    v: [xsd, 0],
    a: [xsdd, 0],
    angle: 0,
    omega: 0,
    alpha: 0,
  };
  const B: [number, number] = [xs, 0];

  // Unknowns: [F1x, F1y, F2x, F2y, F3x, F3y, N4, effort] with effort = τ or P.
  // u × F = u_x F_y − u_y F_x: the coefficients of (F_x, F_y).
  const cross = (u: number[]) => ({ fx: -u[1], fy: u[0] });
  const z = () => new Array<number>(8).fill(0);
  const rows: number[][] = [];
  const rhs: number[] = [];
  /**
   * Newton–Euler rows of a link between its joint force F_in (unknowns 2·fin, 2·fin + 1,
   * acting at p_in) and the reaction −F_out (unknowns 2·fout, …, at p_out):
   *   m a_x = F_in,x − F_out,x,  m a_y + m g = F_in,y − F_out,y,
   *   I α = (p_in − c)×F_in − (p_out − c)×F_out (+ τ, unknown 7, when `torque`).
   */
  const linkRows = (
    body: PlanarBody,
    mass: number,
    inertia: number,
    fin: number,
    pIn: readonly number[],
    fout: number,
    pOut: readonly number[],
    torque: boolean,
  ) => {
    for (let axis = 0; axis < 2; axis++) {
      const e = z();
      e[2 * fin + axis] = 1;
      e[2 * fout + axis] = -1;
      rows.push(e);
      rhs.push(mass * body.a[axis] + (axis === 1 ? mass * G : 0));
    }
    const e = z();
    const cIn = cross([pIn[0] - body.x[0], pIn[1] - body.x[1]]);
    const cOut = cross([pOut[0] - body.x[0], pOut[1] - body.x[1]]);
    e[2 * fin] = cIn.fx;
    e[2 * fin + 1] = cIn.fy;
    e[2 * fout] = -cOut.fx;
    e[2 * fout + 1] = -cOut.fy;
    if (torque) e[7] = 1;
    rows.push(e);
    rhs.push(inertia * body.alpha);
  };
  // crank: F1 at O, F2 at A, the motor torque when it drives; rod: F2 at A, F3 at B
  linkRows(crank, M1, I1, 0, [0, 0], 1, A, drive === "crank");
  linkRows(rod, M2, I2, 1, A, 2, B, false);
  // slider x: m3 a = F3x + P ; y: m3 a_y = F3y + N4 − m3 g
  let e = z();
  e[4] = 1;
  if (drive === "slider") e[7] = 1;
  rows.push(e);
  rhs.push(M3 * xsdd);
  e = z();
  e[5] = 1;
  e[6] = 1;
  rows.push(e);
  rhs.push(M3 * G);
  const s = solveDense(rows, rhs);
  return {
    phi,
    beta,
    crank,
    rod,
    slider,
    A,
    B,
    F1: [s[0], s[1]],
    F2: [s[2], s[3]],
    F3: [s[4], s[5]],
    N4: s[6],
    P: drive === "slider" ? s[7] : 0,
    tau: drive === "crank" ? s[7] : 0,
  };
}
