/**
 * The smallest fem body of the tests: one tetrahedron on the corners of the unit right
 * tetrahedron (0, e_x, e_y, e_z), positively oriented, density 600 kg/m³, E = 1 MPa.
 */

/** The inline fem input of that tetrahedron; `extra` adds or replaces fields. */
export function unitTetFem(extra: Record<string, unknown> = {}) {
  return {
    id: "tet",
    nodes: [
      [0, 0, 0],
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ],
    elements: [[0, 1, 2, 3]],
    density: 600,
    youngModulus: 1e6,
    ...extra,
  };
}
