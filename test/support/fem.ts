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

/** The audit's soft material: 1000 kg/m³, E = 1e5 Pa, ν = 0.3. */
export const SOFT = { density: 1000, youngModulus: 1e5, poissonRatio: 0.3 } as const;

/**
 * Two soft fem blocks on a floor plane: `bottom` (0.2 × 0.2 × 0.1 m, 2 × 2 × 1 cells)
 * resting on it, `top` (0.1 × 0.1 × 0.05 m, 0.5 kg) 2 mm above it, so that the drop can
 * release at most m g · 2 mm = 9.81 mJ of potential energy (the bottom block's settling
 * under the top's weight releases less than a tenth of a millijoule more). `resolution`
 * the cells of both blocks.
 */
export function softStack(
  contact: Record<string, unknown>,
  solver: Record<string, unknown>,
  resolution: [number, number, number] = [2, 2, 1],
) {
  return {
    gravity: [0, 0, -9.81],
    bodies: [{ id: "floor", fixed: true, shapes: [{ type: "plane" }] }],
    fem: [
      { id: "bottom", box: { size: [0.2, 0.2, 0.1], resolution, center: [0, 0, 0.05] }, ...SOFT },
      { id: "top", box: { size: [0.1, 0.1, 0.05], resolution, center: [0, 0, 0.127] }, ...SOFT },
    ],
    contact,
    solver,
  };
}

/** The energy the softStack's drop can release (J): the top block's m g · 2 mm. */
export const SOFT_STACK_DROP = 0.5 * 9.81 * 0.002;
