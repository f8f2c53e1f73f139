/**
 * The validity checks of a model's `fem` bodies that zod's per-field rules cannot state
 * (schemas/model.ts calls them from its cross-reference refinement): a mesh given either
 * inline (nodes and elements) or as a box; element node indices in range and distinct;
 * no degenerate element; every node in some element (a node without one would have no
 * mass); fixed nodes and attachment nodes in range; fixedFaces only on a box; the
 * approximate tangent only for the corotational material; a consistent mass only with
 * the integrators that solve with a full mass matrix. And the node references
 * "<fem id>/<k>" by which forces, joints, sensors and inputs name a node.
 *
 * Pure functions over plain data, no import (the engine builds the same meshes:
 * src/engine/forces/fem/mesh.ts numbers a box's nodes as boxNodeCount here counts them).
 */

/** The fields of a fem body these checks read (a validated FemBody has them). */
export interface FemShape {
  id: string;
  nodes?: readonly (readonly number[])[];
  elements?: readonly (readonly number[])[];
  box?: { resolution: readonly number[] };
  material: string;
  tangent: string;
  fixedNodes: readonly number[];
  fixedFaces: readonly string[];
  attachments: readonly { node: number }[];
}

export interface FemIssue {
  path: (string | number)[];
  message: string;
}

/** Largest number of nodes of one fem body, and of all of a model's together. */
export const FEM_MAX_NODES = 200_000;
/** Issues reported per fem body at most (a bad large mesh would give thousands). */
const MAX_ISSUES = 20;

/** Nodes of a box of `resolution` cells: (nx + 1)(ny + 1)(nz + 1). */
export function boxNodeCount(resolution: readonly number[]): number {
  return (resolution[0] + 1) * (resolution[1] + 1) * (resolution[2] + 1);
}

/** Number of nodes of a fem body (0 when it has no mesh yet: an issue elsewhere). */
export function femNodeCount(f: Pick<FemShape, "nodes" | "box">): number {
  if (f.box) return boxNodeCount(f.box.resolution);
  return f.nodes?.length ?? 0;
}

/** A node reference "<fem id>/<k>" split, or null when `ref` has no "/". */
export function parseNodeRef(ref: string): { fem: string; node: number } | null {
  const slash = ref.lastIndexOf("/");
  if (slash < 0) return null;
  return { fem: ref.slice(0, slash), node: Number(ref.slice(slash + 1)) };
}

/** Whether node k of fem body `f` is fixed (fixedNodes, or on one of a box's fixedFaces). */
export function femNodeFixed(
  f: Pick<FemShape, "box" | "fixedNodes" | "fixedFaces">,
  k: number,
): boolean {
  if (f.fixedNodes.includes(k)) return true;
  if (!f.box || f.fixedFaces.length === 0) return false;
  const [nx, ny] = f.box.resolution;
  const ijk = [
    k % (nx + 1),
    Math.floor(k / (nx + 1)) % (ny + 1),
    Math.floor(k / ((nx + 1) * (ny + 1))),
  ];
  return f.fixedFaces.some((face) => {
    const axis = "xyz".indexOf(face[1]);
    return ijk[axis] === (face[0] === "-" ? 0 : f.box?.resolution[axis]);
  });
}

/** Issues of fem body `f` at path ["fem", index, …]. */
export function femIssues(f: FemShape, index: number): FemIssue[] {
  const out: FemIssue[] = [];
  const at = (...p: (string | number)[]) => ["fem", index, ...p];
  const add = (path: (string | number)[], message: string) => {
    if (out.length < MAX_ISSUES) out.push({ path, message });
  };
  const inline = f.nodes !== undefined || f.elements !== undefined;
  if (inline && f.box) add(at(), `fem "${f.id}": give either nodes and elements or box, not both`);
  else if (!inline && !f.box)
    add(at(), `fem "${f.id}": give either nodes and elements (a tetrahedral mesh) or box`);
  else if (inline && (f.nodes === undefined || f.elements === undefined))
    add(
      at(f.nodes === undefined ? "nodes" : "elements"),
      `fem "${f.id}": nodes and elements go together`,
    );
  const count = femNodeCount(f);
  if (count > FEM_MAX_NODES)
    add(
      at(f.box ? "box" : "nodes"),
      `fem "${f.id}" has ${count} nodes, above the limit of ${FEM_MAX_NODES}`,
    );
  if (f.nodes && f.elements && !f.box) meshIssues(f.nodes, f.elements, f.id, at, add);
  f.fixedNodes.forEach((k, i) => {
    if (k >= count) add(at("fixedNodes", i), `fem "${f.id}" has no node ${k} (${count} nodes)`);
  });
  if (f.fixedFaces.length > 0 && !f.box)
    add(at("fixedFaces"), `fem "${f.id}": fixedFaces name the faces of a box mesh`);
  f.attachments.forEach((a, i) => {
    if (a.node >= count)
      add(at("attachments", i, "node"), `fem "${f.id}" has no node ${a.node} (${count} nodes)`);
  });
  if (f.tangent === "approximate" && f.material !== "corotational")
    add(
      at("tangent"),
      `fem "${f.id}": the approximate tangent is the corotational one (material "${f.material}" has its exact tangent)`,
    );
  return out;
}

/** The integrators that solve with a full (consistent) mass matrix. */
const FULL_MASS_INTEGRATORS = ["newmark", "generalized-alpha"];

/**
 * The issue of a fem body with `mass: "consistent"` under an integrator that solves with
 * the bodies' diagonal masses only (the velocity-level schemes: their explicit and
 * nonsmooth paths divide by the particle masses), at ["fem", i, "mass"]; null when none.
 */
export function consistentMassIssue(
  fem: readonly { id: string; mass: string }[],
  integrator: string,
): FemIssue | null {
  if (FULL_MASS_INTEGRATORS.includes(integrator)) return null;
  const i = fem.findIndex((f) => f.mass === "consistent");
  if (i < 0) return null;
  return {
    path: ["fem", i, "mass"],
    message: `fem "${fem[i].id}": a consistent mass needs integrator newmark or generalized-alpha (solver.integrator is "${integrator}")`,
  };
}

function meshIssues(
  nodes: readonly (readonly number[])[],
  elements: readonly (readonly number[])[],
  id: string,
  at: (...p: (string | number)[]) => (string | number)[],
  add: (path: (string | number)[], message: string) => void,
): void {
  const n = nodes.length;
  const used = new Uint8Array(n);
  elements.forEach((el, e) => {
    let ok = true;
    el.forEach((k, q) => {
      if (k >= n) {
        add(at("elements", e, q), `fem "${id}": element ${e} refers to node ${k} (${n} nodes)`);
        ok = false;
      } else used[k] = 1;
    });
    if (!ok) return;
    if (new Set(el).size < 4) {
      add(at("elements", e), `fem "${id}": element ${e} repeats a node`);
      return;
    }
    const [p0, p1, p2, p3] = el.map((k) => nodes[k]);
    const u = [0, 1, 2].map((i) => p1[i] - p0[i]);
    const v = [0, 1, 2].map((i) => p2[i] - p0[i]);
    const w = [0, 1, 2].map((i) => p3[i] - p0[i]);
    const det =
      u[0] * (v[1] * w[2] - v[2] * w[1]) -
      u[1] * (v[0] * w[2] - v[2] * w[0]) +
      u[2] * (v[0] * w[1] - v[1] * w[0]);
    const scale = Math.max(...u.map(Math.abs), ...v.map(Math.abs), ...w.map(Math.abs));
    if (!(Math.abs(det) > 1e-12 * scale ** 3))
      add(at("elements", e), `fem "${id}": element ${e} is degenerate (zero volume)`);
  });
  for (let k = 0; k < n; k++)
    if (!used[k])
      add(at("nodes", k), `fem "${id}": node ${k} belongs to no element (it would have no mass)`);
}
