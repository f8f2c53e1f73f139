/**
 * From a model's `fem` bodies to the engine's pieces (simulation/build.ts calls these):
 *  - prepareFem: each body's mesh (inline, oriented; or the box of mesh.ts), its lumped
 *    node masses and fixed nodes;
 *  - femBodyInits: its nodes as particles with ids "<fem id>/<k>", appended after the
 *    model's bodies (fixed nodes as fixed particles), initial positions at rest and the
 *    body's initial velocity; gravity then acts on the node masses like on any particle;
 *  - createFemEffectors: one FemEffector per body;
 *  - femAttachmentJoints: each attachment as a spherical joint "<fem id>/attachment/<i>"
 *    between the body point and the node (its reaction is in the State's joints), the
 *    point defaulting to where the node is in the model's configuration.
 */
import type { FemSpec, JointSpec } from "../../../../schemas/model";
import type { BodyInit, BodySystem } from "../../model/body-system";
import { FemEffector } from "./fem-effector";
import { boxFaceNodes, boxMesh, lumpedMasses, orientElements, type TetMesh } from "./mesh";
import { type FemSurface, meshSurface } from "./surface";

export interface PreparedFem {
  spec: FemSpec;
  mesh: TetMesh;
  /** Lumped node masses (kg). */
  mass: Float64Array;
  /** 1 for a fixed node. */
  fixed: Uint8Array;
  /** The boundary triangles and their vertices (surface.ts). */
  surface: FemSurface;
}

/** The id of node k of fem body `femId`. */
export function femNodeId(femId: string, k: number): string {
  return `${femId}/${k}`;
}

export function prepareFem(specs: readonly FemSpec[]): PreparedFem[] {
  return specs.map((spec) => {
    let mesh: TetMesh;
    if (spec.box) mesh = boxMesh(spec.box);
    else {
      if (!spec.nodes || !spec.elements)
        throw new Error(`fem "${spec.id}": give nodes and elements, or box`);
      const elements = Int32Array.from(spec.elements.flat());
      mesh = { nodes: Float64Array.from(spec.nodes.flat()), elements };
      orientElements(mesh.nodes, elements);
    }
    const n = mesh.nodes.length / 3;
    const fixed = new Uint8Array(n);
    for (const k of spec.fixedNodes) {
      if (k >= n) throw new Error(`fem "${spec.id}": no node ${k} to fix (${n} nodes)`);
      fixed[k] = 1;
    }
    if (spec.box)
      for (const face of spec.fixedFaces)
        for (const k of boxFaceNodes(spec.box.resolution, face)) fixed[k] = 1;
    const mass = lumpedMasses(mesh, spec.density);
    return { spec, mesh, mass, fixed, surface: meshSurface(mesh.elements, n) };
  });
}

/** The nodes of every fem body as particles (see header), in order. */
export function femBodyInits(prepared: readonly PreparedFem[]): BodyInit[] {
  const out: BodyInit[] = [];
  for (const { spec, mesh, mass, fixed } of prepared) {
    const n = mesh.nodes.length / 3;
    for (let k = 0; k < n; k++) {
      if (!fixed[k] && !(mass[k] > 0))
        throw new Error(`fem "${spec.id}": node ${k} belongs to no element (no mass)`);
      out.push({
        id: femNodeId(spec.id, k),
        kind: "particle",
        fixed: fixed[k] === 1,
        mass: mass[k],
        inertia: [0, 0, 0, 0, 0, 0, 0, 0, 0],
        position: mesh.nodes.subarray(3 * k, 3 * k + 3),
        orientation: [1, 0, 0, 0],
        velocity: spec.velocity,
        angularVelocity: [0, 0, 0],
      });
    }
  }
  return out;
}

/** Body indices of a fem body's nodes in sys. */
export function nodeBodies(sys: BodySystem, p: PreparedFem): Int32Array {
  const n = p.mesh.nodes.length / 3;
  const out = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const b = sys.index.get(femNodeId(p.spec.id, k));
    if (b === undefined) throw new Error(`fem "${p.spec.id}": node ${k} is not in the body system`);
    out[k] = b;
  }
  return out;
}

export function createFemEffectors(
  prepared: readonly PreparedFem[],
  sys: BodySystem,
): FemEffector[] {
  return prepared.map(
    (p) =>
      new FemEffector(sys, {
        id: p.spec.id,
        nodeBodies: nodeBodies(sys, p),
        rest: p.mesh.nodes,
        elements: p.mesh.elements,
        youngModulus: p.spec.youngModulus,
        poissonRatio: p.spec.poissonRatio,
        material: p.spec.material,
        tangent: p.spec.tangent,
        surface: p.surface,
        consistentDensity: p.spec.mass === "consistent" ? p.spec.density : undefined,
      }),
  );
}

/**
 * The attachments as spherical joints (see header). sys must hold the model's
 * configuration: a default point is the node's position in the body's frame there.
 */
export function femAttachmentJoints(
  prepared: readonly PreparedFem[],
  sys: BodySystem,
): JointSpec[] {
  const out: JointSpec[] = [];
  for (const { spec, mesh } of prepared)
    spec.attachments.forEach((a, i) => {
      const x = mesh.nodes.subarray(3 * a.node, 3 * a.node + 3);
      let point: [number, number, number];
      if (a.point) point = [a.point[0], a.point[1], a.point[2]];
      else if (a.body === "ground") point = [x[0], x[1], x[2]];
      else {
        const b = sys.index.get(a.body);
        if (b === undefined)
          throw new Error(`fem "${spec.id}" attachment ${i} refers to unknown body "${a.body}"`);
        // p = Rᵀ (x − x_b), R the body's rotation (identity for a particle)
        const R = sys.rotation;
        const d = [0, 1, 2].map((r) => x[r] - sys.pos[3 * b + r]);
        point = [0, 1, 2].map(
          (c) => R[9 * b + c] * d[0] + R[9 * b + 3 + c] * d[1] + R[9 * b + 6 + c] * d[2],
        ) as [number, number, number];
      }
      out.push({
        id: `${spec.id}/attachment/${i}`,
        type: "spherical",
        a: { body: a.body, point },
        b: { body: femNodeId(spec.id, a.node), point: [0, 0, 0] },
      });
    });
  return out;
}
