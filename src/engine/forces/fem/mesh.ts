/**
 * Tetrahedral meshes: a box (beam) primitive split into tetrahedra, the orientation of
 * given elements, and the lumped node masses.
 *
 * Box: size [a, b, c] (m) centred at `center`, turned by `orientation` (body → world,
 * [w, x, y, z]), resolution [nx, ny, nz] hexahedral cells. Node (i, j, k), 0 ≤ i ≤ nx
 * along the box's local x, j along y, k along z, has the index
 *   i + (nx + 1) (j + (ny + 1) k)
 * and sits at center + R ((i/nx − ½) a, (j/ny − ½) b, (k/nz − ½) c). Each cell is split
 * into five tetrahedra (a central one and four corner ones), mirrored in every other cell
 * (by the parity of i + j + k) so that the face diagonals of neighbouring cells match: the
 * mesh is conforming. For the same nodes the five-tet cells are softer in bending than
 * the six-tet (Kuhn) split, `boxMesh(spec, 6)`, closer to the exact deflection of a
 * locking-prone beam: a cantilever on 60×6×6 cells deflects 5.1 % short of Euler–
 * Bernoulli with five, 8.0 % with six (test/engine/forces/fem/cantilever.test.ts's beam).
 *
 * Lumped mass: each element gives ρ V / 4 to each of its nodes (the row sums of the
 * consistent mass matrix ρ V/20 (1 + δ_ab) I: the same total mass and centre of mass).
 */
import { quatToMat3 } from "../../math/quat";
import { tetSixVolume } from "./tet";

export interface TetMesh {
  /** Positions, 3 per node (m). */
  nodes: Float64Array;
  /** Node indices, 4 per tetrahedron, positively oriented. */
  elements: Int32Array;
}

export interface BoxMeshSpec {
  size: readonly [number, number, number];
  resolution: readonly [number, number, number];
  center: readonly [number, number, number];
  orientation: readonly [number, number, number, number];
}

/** Cell corners by bits (x = 1, y = 2, z = 4): the five tets of an even and an odd cell. */
const EVEN_CELL = [
  [0, 1, 2, 4],
  [3, 2, 1, 7],
  [5, 1, 4, 7],
  [6, 4, 2, 7],
  [1, 2, 4, 7],
];
const ODD_CELL = [
  [1, 0, 5, 3],
  [2, 3, 0, 6],
  [4, 5, 6, 0],
  [7, 6, 5, 3],
  [0, 3, 6, 5],
];
/** The six tets of the Kuhn split: paths 0 → 7 along the axes in every order. */
const KUHN_CELL = [
  [0, 1, 3, 7],
  [0, 1, 5, 7],
  [0, 2, 3, 7],
  [0, 2, 6, 7],
  [0, 4, 5, 7],
  [0, 4, 6, 7],
];

/** Number of nodes of a box mesh of this resolution. */
export function boxNodeCount(resolution: readonly [number, number, number]): number {
  return (resolution[0] + 1) * (resolution[1] + 1) * (resolution[2] + 1);
}

/** The box mesh described in the header. */
export function boxMesh(spec: BoxMeshSpec, tetsPerCell: 5 | 6 = 5): TetMesh {
  const [nx, ny, nz] = spec.resolution;
  const [a, b, c] = spec.size;
  const [w, qx, qy, qz] = spec.orientation;
  const qn = Math.hypot(w, qx, qy, qz);
  const R = new Float64Array(9);
  quatToMat3(R, 0, Float64Array.of(w / qn, qx / qn, qy / qn, qz / qn), 0);
  const nodes = new Float64Array(3 * boxNodeCount(spec.resolution));
  const index = (i: number, j: number, k: number) => i + (nx + 1) * (j + (ny + 1) * k);
  for (let k = 0; k <= nz; k++)
    for (let j = 0; j <= ny; j++)
      for (let i = 0; i <= nx; i++) {
        const lx = (i / nx - 0.5) * a;
        const ly = (j / ny - 0.5) * b;
        const lz = (k / nz - 0.5) * c;
        const n = 3 * index(i, j, k);
        for (let r = 0; r < 3; r++)
          nodes[n + r] = spec.center[r] + R[3 * r] * lx + R[3 * r + 1] * ly + R[3 * r + 2] * lz;
      }
  const elements = new Int32Array(4 * tetsPerCell * nx * ny * nz);
  let e = 0;
  const corner = new Int32Array(8);
  for (let k = 0; k < nz; k++)
    for (let j = 0; j < ny; j++)
      for (let i = 0; i < nx; i++) {
        for (let bits = 0; bits < 8; bits++)
          corner[bits] = index(i + (bits & 1), j + ((bits >> 1) & 1), k + ((bits >> 2) & 1));
        const cell = tetsPerCell === 6 ? KUHN_CELL : (i + j + k) % 2 === 0 ? EVEN_CELL : ODD_CELL;
        for (const t of cell) {
          for (let q = 0; q < 4; q++) elements[4 * e + q] = corner[t[q]];
          e++;
        }
      }
  orientElements(nodes, elements);
  return { nodes, elements };
}

/**
 * Swaps the last two nodes of every negatively oriented element, so that every element
 * has a positive rest volume. Returns the number of elements swapped.
 */
export function orientElements(nodes: ArrayLike<number>, elements: Int32Array): number {
  let swapped = 0;
  for (let e = 0; e < elements.length / 4; e++) {
    const o = 4 * e;
    if (tetSixVolume(nodes, elements[o], elements[o + 1], elements[o + 2], elements[o + 3]) < 0) {
      const t = elements[o + 2];
      elements[o + 2] = elements[o + 3];
      elements[o + 3] = t;
      swapped++;
    }
  }
  return swapped;
}

/** The box nodes on a face ("-x", "+x", "-y", "+y", "-z", "+z" of the box's local axes). */
export function boxFaceNodes(
  resolution: readonly [number, number, number],
  face: string,
): number[] {
  const [nx, ny, nz] = resolution;
  const axis = "xyz".indexOf(face[1]);
  if (axis < 0 || (face[0] !== "-" && face[0] !== "+"))
    throw new Error(`unknown box face "${face}"`);
  const at = face[0] === "-" ? 0 : resolution[axis];
  const out: number[] = [];
  for (let k = 0; k <= nz; k++)
    for (let j = 0; j <= ny; j++)
      for (let i = 0; i <= nx; i++)
        if ([i, j, k][axis] === at) out.push(i + (nx + 1) * (j + (ny + 1) * k));
  return out;
}

/** Lumped node masses: ρ V / 4 from every element to each of its nodes (kg). */
export function lumpedMasses(mesh: TetMesh, density: number): Float64Array {
  const n = mesh.nodes.length / 3;
  const mass = new Float64Array(n);
  const el = mesh.elements;
  for (let e = 0; e < el.length / 4; e++) {
    const v = tetSixVolume(mesh.nodes, el[4 * e], el[4 * e + 1], el[4 * e + 2], el[4 * e + 3]) / 6;
    for (let q = 0; q < 4; q++) mass[el[4 * e + q]] += (density * v) / 4;
  }
  return mass;
}
