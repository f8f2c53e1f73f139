/**
 * A spherical cap as a triangle mesh seen from inside (a bowl): the sphere of radius R
 * centred at (0, 0, R), polar angle θ from its bottom up to thetaMax in `rings` rings of
 * `segments` quads (split in two triangles; the bottom ring a fan), counter-clockwise
 * seen from the centre, so the face normals point into the bowl.
 */
export function bowlMesh(
  R: number,
  thetaMax: number,
  rings: number,
  segments: number,
): { vertices: [number, number, number][]; triangles: [number, number, number][] } {
  const vertices: [number, number, number][] = [[0, 0, 0]];
  for (let i = 1; i <= rings; i++) {
    const th = (thetaMax * i) / rings;
    for (let j = 0; j < segments; j++) {
      const ph = (2 * Math.PI * j) / segments;
      vertices.push([
        R * Math.sin(th) * Math.cos(ph),
        R * Math.sin(th) * Math.sin(ph),
        R - R * Math.cos(th),
      ]);
    }
  }
  const at = (i: number, j: number) => (i === 0 ? 0 : 1 + (i - 1) * segments + (j % segments));
  const triangles: [number, number, number][] = [];
  for (let j = 0; j < segments; j++) triangles.push([0, at(1, j), at(1, j + 1)]);
  for (let i = 1; i < rings; i++)
    for (let j = 0; j < segments; j++) {
      triangles.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
      triangles.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
    }
  return { vertices, triangles };
}
