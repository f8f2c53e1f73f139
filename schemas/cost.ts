/**
 * Cost limits of the dense factorizations, part of a request's validity: a model, a PATCH
 * or an assembly request that names a dense solver for too large a system is rejected, so
 * that a single request cannot ask a worker for gigabytes. Dense LU (`dense-lu`) and the
 * dense least-squares QR (`sparse-qr`, src/engine/solvers/linear/sparse-qr.ts) store the
 * whole n×n matrix (8 n² bytes) and take O(n³) time.
 *
 * Pure functions over the model spec, with no import: the schemas (model.ts, api.ts) check
 * them at validation, and the engine (Simulation.update, assembly) imports them from here.
 */

/**
 * Largest order of a dense factorization (4000: a 128 MB matrix; its LU is about 2·10¹⁰
 * flops, tens of seconds here, which the server's step deadline bounds: the factorizations
 * check it every 32 columns).
 */
export const DENSE_MAX_ORDER = 4000;

/** The solvers that factor a dense matrix. */
export function isDenseSolver(name: string): boolean {
  return name === "dense-lu" || name === "sparse-qr";
}

/**
 * Why `solver` may not factor a system of this order (a message naming both and the
 * limit), or null when it may. `order` is the system's size: the dofs plus the
 * constraint rows (the saddle-point system's order; an upper bound of what is factored).
 */
export function denseOrderIssue(solver: string, order: number): string | null {
  if (!isDenseSolver(solver) || order <= DENSE_MAX_ORDER) return null;
  return `${solver} factors a dense matrix: this system has order ${order} (dofs plus constraint rows), above the limit of ${DENSE_MAX_ORDER} (8·n² bytes); use sparse-lu, sparse-ldlt or an iterative solver`;
}

/** Rows each joint type adds (motor drives: one). */
export const JOINT_ROWS: Record<string, number> = {
  spherical: 3,
  revolute: 5,
  prismatic: 5,
  fixed: 6,
  distance: 1,
};

/** What systemSize and systemOrder read of a model. */
export interface SystemModel {
  bodies: readonly { kind: string; fixed: boolean }[];
  joints: readonly { type: string }[];
  motors: readonly unknown[];
  fem?: readonly {
    nodes?: readonly unknown[];
    box?: { resolution: readonly number[] };
    attachments: readonly unknown[];
  }[];
}

/**
 * The dofs and constraint rows of a model's system: 3 dofs per dynamic particle, 6 per
 * dynamic rigid body, 3 per fem node (its fixed nodes included: a bound); rows: the
 * joints', one per motor, 3 per fem attachment.
 */
export function systemSize(model: SystemModel): { dofs: number; rows: number } {
  let dofs = 0;
  let rows = model.motors.length;
  for (const b of model.bodies) if (!b.fixed) dofs += b.kind === "particle" ? 3 : 6;
  for (const j of model.joints) rows += JOINT_ROWS[j.type] ?? 6;
  for (const f of model.fem ?? []) {
    const r = f.box?.resolution;
    dofs += 3 * (r ? (r[0] + 1) * (r[1] + 1) * (r[2] + 1) : (f.nodes?.length ?? 0));
    rows += 3 * f.attachments.length;
  }
  return { dofs, rows };
}

/** The order of a model's saddle-point system: its dofs plus its constraint rows. */
export function systemOrder(model: SystemModel): number {
  const { dofs, rows } = systemSize(model);
  return dofs + rows;
}
