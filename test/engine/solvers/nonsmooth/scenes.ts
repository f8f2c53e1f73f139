/**
 * Contact problems shared by the nonsmooth solvers' tests, each built independently of the
 * solvers (dense references assembled entry by entry, closed forms stated with each):
 * random LCPs with their 2ⁿ-enumeration solution, single and V-groove friction contacts,
 * random coupled friction problems, particle contact sets as a SparseBlockDelassus and a
 * dense W, random multibody sets as a FactoredDelassus with their dense s·H Y Hᵀ, a
 * resting column of particles, and a tumbling hull's vertex on four terrain triangles.
 */
import {
  FactoredDelassus,
  type NonsmoothProblem,
  SparseBlockDelassus,
} from "../../../../src/engine/solvers/nonsmooth";
import { denseSolve } from "../../../support/dense-solve";
import { mulberry32 } from "../../../support/random";
import { bruteForceLcp, randomSpd } from "./helpers";

/** The frictionless problem w = W r + q (one row per contact). */
export function lcp(W: Float64Array, q: Float64Array): NonsmoothProblem {
  return { contacts: q.length, contactDim: 1, W, q };
}

/**
 * One friction contact with W = I, q = (−1, 0, 0) (approaching at 1 m/s, no slip) and
 * μ = 0.3: its solution is r = (1, 0, 0), u = W r + q = 0.
 */
export function unitFrictionContact(): NonsmoothProblem {
  return {
    contacts: 1,
    contactDim: 3,
    W: Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]),
    q: Float64Array.from([-1, 0, 0]),
    mu: Float64Array.from([0.3]),
  };
}

/** A random LCP and its solution by enumeration. */
export interface LcpCase {
  n: number;
  W: Float64Array;
  q: Float64Array;
  ref: Float64Array;
}

let lcpCases: readonly LcpCase[] | undefined;

/**
 * 3 random LCPs per size 2..12: W = AᵀA + 0.5 I (SPD, condition number ≲ 100), q ∈ [−1, 1]ⁿ.
 * Built once per test file (the enumeration is 2ⁿ solves); read-only.
 */
export function randomLcpCases(): readonly LcpCase[] {
  if (lcpCases) return lcpCases;
  const cases: LcpCase[] = [];
  const rand = mulberry32(20240611);
  for (let n = 2; n <= 12; n++)
    for (let c = 0; c < 3; c++) {
      const W = randomSpd(n, 0.5, rand);
      const q = Float64Array.from({ length: n }, () => 2 * rand() - 1);
      cases.push({ n, W, q, ref: bruteForceLcp(W, q, n) });
    }
  lcpCases = cases;
  return cases;
}

/**
 * 8 random coupled friction problems, 2–5 contacts: W = AᵀA + 0.5 I (3nc × 3nc), q_n < 0
 * (approaching), q_t ∈ [−1, 1], μ ∈ [0.1, 0.4].
 */
export function randomFrictionProblems(): NonsmoothProblem[] {
  const rand = mulberry32(99);
  const problems: NonsmoothProblem[] = [];
  for (let c = 0; c < 8; c++) {
    const nc = 2 + (c % 4);
    const W = randomSpd(3 * nc, 0.5, rand);
    const q = Float64Array.from({ length: 3 * nc }, (_, k) =>
      k % 3 === 0 ? -rand() : 2 * rand() - 1,
    );
    const mu = Float64Array.from({ length: nc }, () => 0.1 + 0.3 * rand());
    problems.push({ contacts: nc, contactDim: 3, W, q, mu });
  }
  return problems;
}

/** A friction problem (contactDim 3) from plain arrays: contacts = μ.length. */
export function fc(
  W: ArrayLike<number>,
  q: ArrayLike<number>,
  mu: ArrayLike<number>,
): NonsmoothProblem {
  return {
    contacts: mu.length,
    contactDim: 3,
    W: Float64Array.from(W),
    q: Float64Array.from(q),
    mu: Float64Array.from(mu),
  };
}

/**
 * Independent single-contact Coulomb reference for a general SPD 3×3 W: take-off (q_n ≥ 0),
 * stick (r = −W⁻¹q inside K), or slip r = r_n (1, −μ cos θ, −μ sin θ) with u_n = 0 and
 * u_t = κ (cos θ, sin θ), κ > 0, found by scanning θ and bisecting the cross product.
 */
export function coulombReference(W: number[], q: number[], mu: number): number[][] {
  const sols: number[][] = [];
  if (q[0] >= 0) sols.push([0, 0, 0]);
  const rs = Array.from(
    denseSolve(
      W,
      q.map((v) => -v),
      3,
    ),
  );
  if (rs[0] >= 0 && Math.hypot(rs[1], rs[2]) <= mu * rs[0]) sols.push(rs);
  const at = (th: number) => {
    const d = [1, -mu * Math.cos(th), -mu * Math.sin(th)];
    const Wd = [0, 1, 2].map((a) => W[3 * a] * d[0] + W[3 * a + 1] * d[1] + W[3 * a + 2] * d[2]);
    const rn = -q[0] / Wd[0];
    const u1 = rn * Wd[1] + q[1];
    const u2 = rn * Wd[2] + q[2];
    return {
      rn,
      r: d.map((v) => v * rn),
      cross: Math.cos(th) * u2 - Math.sin(th) * u1,
      kappa: Math.cos(th) * u1 + Math.sin(th) * u2,
    };
  };
  const N = 3600;
  for (let k = 0; k < N; k++) {
    let a = (2 * Math.PI * k) / N;
    let b = (2 * Math.PI * (k + 1)) / N;
    if (Math.sign(at(a).cross) === Math.sign(at(b).cross)) continue;
    for (let it = 0; it < 200; it++) {
      const c = 0.5 * (a + b);
      if (Math.sign(at(c).cross) === Math.sign(at(a).cross)) a = c;
      else b = c;
    }
    const s = at(0.5 * (a + b));
    if (s.rn > 0 && s.kappa > 0) sols.push(s.r);
  }
  return sols;
}

/**
 * A particle (mass m) falling into a V-groove while sliding along it (x): two contacts with
 * normals n₁ = (0, s, c), n₂ = (0, −s, c), s = sin α, c = cos α (normals tilted ±α from the
 * vertical), tangents t₁ = e_x, t₂ = n × e_x. W_ij = R_i R_jᵀ / m (coupled: n₁·n₂ = c² − s²),
 * q_i = R_i v. Slip closed form: by symmetry r_n1 = r_n2, u_n = 0 ⇒ v'_z = 0 ⇒
 * r_n = m v₀/(2c); r_t1 = −μ r_n (opposite to the sliding x velocity), r_t2 = 0, and
 * v'_x = v_x − μ v₀/c > 0.
 */
export function vGroove(m: number, alpha: number, v: number[], mu: number) {
  const s = Math.sin(alpha);
  const c = Math.cos(alpha);
  const R = [
    [
      [0, s, c],
      [1, 0, 0],
      [0, c, -s],
    ],
    [
      [0, -s, c],
      [1, 0, 0],
      [0, c, s],
    ],
  ];
  const rows = R.flat();
  const W = new Float64Array(36);
  for (let i = 0; i < 6; i++)
    for (let j = 0; j < 6; j++)
      W[i * 6 + j] =
        (rows[i][0] * rows[j][0] + rows[i][1] * rows[j][1] + rows[i][2] * rows[j][2]) / m;
  const q = rows.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]);
  return { problem: fc(W, q, [mu, mu]), rows, s, c };
}

type Vec3 = [number, number, number];
const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const unit = (a: Vec3): Vec3 => {
  const l = Math.hypot(...a);
  return [a[0] / l, a[1] / l, a[2] / l];
};

/**
 * Particles (mass m_b) with contacts between random pairs (or a particle and the fixed
 * ground, body −1). Contact k between bodies a (−1 allowed) and b has frame rows
 * R_k = [n; t1; t2] and local velocity u_k = R_k (v_b − v_a), so H has blocks +R_k at b and
 * −R_k at a. Returns W = H M⁻¹ Hᵀ twice, independently: dense from the explicit H, and as
 * the upper-triangle block list W_kl = Σ_shared bodies s σ_ks σ_ls R_k R_lᵀ / m_s for
 * SparseBlockDelassus.fromBlockPairs; q = H v for random free velocities v.
 */
export function particleContacts(nb: number, nc: number, seed: number, withDense: boolean) {
  const rand = mulberry32(seed);
  const mass = Array.from({ length: nb }, () => 0.5 + rand());
  const R: Vec3[][] = [];
  const ends: [number, number][] = [];
  for (let k = 0; k < nc; k++) {
    const b = Math.floor(rand() * nb);
    let a = -1;
    if (rand() > 0.3) {
      a = Math.floor(rand() * (nb - 1));
      if (a >= b) a++;
    }
    ends.push([a, b]);
    const n = unit([2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1]);
    const t1 = unit(cross(n, Math.abs(n[0]) < 0.6 ? [1, 0, 0] : [0, 1, 0]));
    R.push([n, t1, cross(n, t1)]);
  }
  const v = Array.from({ length: 3 * nb }, () => 2 * rand() - 1);
  const q = new Float64Array(3 * nc);
  for (let k = 0; k < nc; k++)
    for (let i = 0; i < 3; i++) {
      const [a, b] = ends[k];
      let s = 0;
      for (let x = 0; x < 3; x++) s += R[k][i][x] * (v[3 * b + x] - (a >= 0 ? v[3 * a + x] : 0));
      q[3 * k + i] = s;
    }
  // Sparse blocks: contacts sharing a body, listed once (k ≤ l).
  const byBody: number[][] = Array.from({ length: nb }, () => []);
  ends.forEach(([a, b], k) => {
    if (a >= 0) byBody[a].push(k);
    byBody[b].push(k);
  });
  const sign = (k: number, s: number) => (ends[k][1] === s ? 1 : ends[k][0] === s ? -1 : 0);
  const rows: number[] = [];
  const cols: number[] = [];
  const vals: number[] = [];
  for (let s = 0; s < nb; s++)
    for (const k of byBody[s])
      for (const l of byBody[s]) {
        if (l < k) continue;
        rows.push(k);
        cols.push(l);
        const f = (sign(k, s) * sign(l, s)) / mass[s];
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++) {
            let d = 0;
            for (let x = 0; x < 3; x++) d += R[k][i][x] * R[l][j][x];
            vals.push(f * d);
          }
      }
  const sparse = SparseBlockDelassus.fromBlockPairs(nc, 3, rows, cols, vals, { symmetric: true });
  let dense: Float64Array | undefined;
  if (withDense) {
    const m = 3 * nc;
    const nd = 3 * nb;
    const H = new Float64Array(m * nd);
    for (let k = 0; k < nc; k++) {
      const [a, b] = ends[k];
      for (let i = 0; i < 3; i++)
        for (let x = 0; x < 3; x++) {
          H[(3 * k + i) * nd + 3 * b + x] = R[k][i][x];
          if (a >= 0) H[(3 * k + i) * nd + 3 * a + x] = -R[k][i][x];
        }
    }
    dense = new Float64Array(m * m);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let x = 0; x < nd; x++) s += (H[i * nd + x] * H[j * nd + x]) / mass[Math.floor(x / 3)];
        dense[i * m + j] = s;
      }
  }
  const mu = Float64Array.from({ length: nc }, () => 0.2 + 0.4 * rand());
  return { sparse, dense, q, mu };
}

/** A random multibody contact set: bodies of width 6 or 3, contacts on 1 or 2 bodies. */
export interface RandomSet {
  op: FactoredDelassus;
  /** Dense H (3nc × n) and Y (n × n), row-major. */
  H: Float64Array;
  Y: Float64Array;
  n: number;
  nc: number;
}

export function randomSet(seed: number, nb: number, nc: number, dim: 1 | 3, scale = 1): RandomSet {
  const rand = mulberry32(seed);
  const widths = Array.from({ length: nb }, () => (rand() < 0.7 ? 6 : 3));
  const off: number[] = [];
  let n = 0;
  for (const w of widths) {
    off.push(n);
    n += w;
  }
  // Y: per body an SPD block B Bᵀ + 0.1 I (a stand-in for M⁻¹ or W⁻¹ of a body).
  const Y = new Float64Array(n * n);
  widths.forEach((w, b) => {
    const B = Array.from({ length: w * w }, () => rand() - 0.5);
    for (let r = 0; r < w; r++)
      for (let c = 0; c < w; c++) {
        let s = r === c ? 0.1 : 0;
        for (let k = 0; k < w; k++) s += B[r * w + k] * B[c * w + k];
        Y[(off[b] + r) * n + off[b] + c] = s;
      }
  });
  const jac = new Float64Array(36 * nc);
  const resp = new Float64Array(36 * nc);
  const H = new Float64Array(3 * nc * n);
  const op = new FactoredDelassus();
  op.reset(nc, dim, n, scale, jac, resp);
  for (let i = 0; i < nc; i++) {
    const a = rand() < 0.25 ? -1 : Math.floor(rand() * nb); // −1: the ground
    let b = Math.floor(rand() * nb);
    if (b === a) b = (b + 1) % nb;
    [a, b].forEach((body, side) => {
      const w = body < 0 ? 0 : widths[body];
      op.setSide(i, side, body < 0 ? 0 : off[body], w);
      for (let k = 0; k < 3; k++)
        for (let c = 0; c < w; c++) {
          const v = 2 * rand() - 1;
          jac[36 * i + 18 * side + 6 * k + c] = v;
          H[(3 * i + k) * n + off[body] + c] += v;
        }
      // resp column k = Y_X A_iXᵀ row k, from the dense Y.
      for (let k = 0; k < 3; k++)
        for (let r = 0; r < w; r++) {
          let s = 0;
          for (let c = 0; c < w; c++)
            s += Y[(off[body] + r) * n + off[body] + c] * jac[36 * i + 18 * side + 6 * k + c];
          resp[36 * i + 18 * side + 6 * k + r] = s;
        }
    });
  }
  return { op, H, Y, n, nc };
}

/** Dense W = s H_d Y H_dᵀ on the first dim rows of every contact (m × m, row-major). */
export function denseW(set: RandomSet, dim: 1 | 3, scale = 1): Float64Array {
  const { H, Y, n, nc } = set;
  const m = nc * dim;
  const row = (p: number) => 3 * Math.floor(p / dim) + (p % dim);
  const YH = new Float64Array(n * m); // Y H_dᵀ, column p
  for (let p = 0; p < m; p++)
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let c = 0; c < n; c++) s += Y[r * n + c] * H[row(p) * n + c];
      YH[r * m + p] = s;
    }
  const W = new Float64Array(m * m);
  for (let p = 0; p < m; p++)
    for (let q = 0; q < m; q++) {
      let s = 0;
      for (let r = 0; r < n; r++) s += H[row(p) * n + r] * YH[r * m + q];
      W[p * m + q] = scale * s;
    }
  return W;
}

/**
 * A column of k particles of mass mp resting on the ground, contact j below particle j
 * (j = 0: ground). With gravity over one step the free velocities are −g h and the
 * normal impulses hold the weight of everything above: P_j = (k − j) mp g h, closed form.
 * Particles: A = Fᵀ per side (n = e_z for every contact), Y = I/mp.
 */
export function restingColumn(k: number, mp: number, g: number, h: number, dim: 1 | 3) {
  const n = 3 * k;
  const jac = new Float64Array(36 * k);
  const resp = new Float64Array(36 * k);
  const op = new FactoredDelassus().reset(k, dim, n, 1, jac, resp);
  const frame = [
    [0, 0, 1],
    [1, 0, 0],
    [0, 1, 0],
  ];
  for (let j = 0; j < k; j++) {
    const sides: Array<[number, number]> =
      j === 0
        ? [[1, j]]
        : [
            [0, j - 1],
            [1, j],
          ];
    if (j === 0) op.setSide(j, 0, 0, 0);
    for (const [side, body] of sides) {
      op.setSide(j, side, 3 * body, 3);
      const s = side === 0 ? -1 : 1;
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++) {
          jac[36 * j + 18 * side + 6 * r + c] = s * frame[r][c];
          resp[36 * j + 18 * side + 6 * r + c] = (s * frame[r][c]) / mp;
        }
    }
  }
  // q = H v_free with every particle at v_free = (0, 0, −g h): the ground contact sees
  // −g h, the others 0 (both sides fall together).
  const q = new Float64Array(dim * k);
  q[0] = -g * h;
  const exact = Float64Array.from({ length: k }, (_, j) => (k - j) * mp * g * h);
  return { op, q, exact };
}

/**
 * A convex hull (mass 1/1.1387 kg, world inverse inertia I⁻¹ below, 1/(kg·m²)) tumbling at
 * 12 rad/s onto a mesh terrain, its contacts with the terrain in the hull's frame (points
 * from its centre of mass, m; normals): one vertex touches four triangles whose normals
 * differ by 1–1.5° (contacts 0, 3, 4, 5 at one point), two more contacts lie within 1 mm
 * of it and one 3 cm away. The free velocity v = (v, ω) (m/s, rad/s) comes from H-100's
 * step 76 at the defaults (bench/compare, the contacts of one hull, rounded to 4 digits).
 * The four nearly parallel contacts at one point make W = A Y Aᵀ nearly singular: load
 * moves between them with little change of the velocities, where the Gauss–Seidel sweeps
 * stall. Rows of contact i: u = A_i v, A_i = [e; p_i × e] for e = n, t₁, t₂ (t₁ ∥ n × e_x,
 * t₂ = n × t₁); Y = diag(1/m I₃, I⁻¹). Returns the FactoredDelassus problem and the dense
 * W built entry by entry from the same A and Y.
 */
export function hullVertexOnTerrain() {
  const points: Vec3[] = [
    [-0.0685, -0.0142, -0.0422],
    [-0.0685, -0.0136, -0.042],
    [-0.0675, -0.0136, -0.0421],
    [-0.0685, -0.0142, -0.0422],
    [-0.0685, -0.0142, -0.0422],
    [-0.0685, -0.0142, -0.0422],
    [-0.041, 0.0023, -0.0411],
  ];
  const normals: Vec3[] = [
    [0.1078, -0.1912, 0.9756],
    [0.1078, -0.1912, 0.9756],
    [0.1078, -0.1912, 0.9756],
    [0.1204, -0.2035, 0.9716],
    [0.0992, -0.204, 0.9739],
    [0.1073, -0.2122, 0.9713],
    [0.0916, -0.214, 0.9725],
  ];
  const invMass = 1.1387;
  const invInertia = [948.8, 165.4, 94.2, 165.4, 707.5, 70.9, 94.2, 70.9, 636.9];
  const v = [0.1984, -0.575, -0.4926, 11.5134, 3.2268, 1.3938];
  const nc = points.length;
  const A: number[][] = [];
  for (let i = 0; i < nc; i++) {
    const n = unit(normals[i]);
    const t1 = unit(cross(n, [1, 0, 0]));
    for (const e of [n, t1, cross(n, t1)]) A.push([...e, ...cross(points[i], e)]);
  }
  // Y a for a row a of A: the generalized velocity change of a unit impulse along it
  const Ya = A.map((a) => [
    invMass * a[0],
    invMass * a[1],
    invMass * a[2],
    ...[0, 1, 2].map(
      (r) => invInertia[3 * r] * a[3] + invInertia[3 * r + 1] * a[4] + invInertia[3 * r + 2] * a[5],
    ),
  ]);
  const jac = new Float64Array(36 * nc);
  const resp = new Float64Array(36 * nc);
  const op = new FactoredDelassus().reset(nc, 3, 6, 1, jac, resp);
  const q = new Float64Array(3 * nc);
  for (let i = 0; i < nc; i++) {
    op.setSide(i, 0, 0, 6);
    op.setSide(i, 1, 0, 0);
    for (let k = 0; k < 3; k++)
      for (let c = 0; c < 6; c++) {
        jac[36 * i + 6 * k + c] = A[3 * i + k][c];
        resp[36 * i + 6 * k + c] = Ya[3 * i + k][c];
        q[3 * i + k] += A[3 * i + k][c] * v[c];
      }
  }
  const m = 3 * nc;
  const dense = new Float64Array(m * m);
  for (let p = 0; p < m; p++)
    for (let r = 0; r < m; r++) {
      let s = 0;
      for (let c = 0; c < 6; c++) s += A[p][c] * Ya[r][c];
      dense[p * m + r] = s;
    }
  const mu = new Float64Array(nc).fill(0.5);
  return {
    problem: { contacts: nc, contactDim: 3, W: op, q, mu } as NonsmoothProblem,
    dense: { contacts: nc, contactDim: 3, W: dense, q, mu } as NonsmoothProblem,
  };
}
