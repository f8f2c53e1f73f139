/**
 * Mesh files written by the tests for the URDF import (src/formats/urdf/mesh.ts reads them
 * with three.js's loaders): triangles are 9 numbers each (three corners, counter-clockwise
 * seen from outside); a string among them is written as it is (a malformed file's "nan").
 */
export type V3 = [number, number, number];

/** A binary STL: 80-byte header, triangle count, then per triangle a zero normal and its corners. */
export function binaryStl(tris: number[][]): Buffer {
  const b = Buffer.alloc(84 + 50 * tris.length);
  b.write("binary stl written by the test", 0, "latin1");
  b.writeUInt32LE(tris.length, 80);
  tris.forEach((t, k) => {
    t.forEach((x, i) => {
      b.writeFloatLE(x, 84 + 50 * k + 12 + 4 * i);
    });
  });
  return b;
}

/** An ASCII STL (the facet normals 0, which readers recompute). */
export function asciiStl(tris: (number | string)[][]): string {
  const facets = tris.map(
    (t) =>
      `facet normal 0 0 0\n outer loop\n  vertex ${t.slice(0, 3).join(" ")}\n  vertex ${t.slice(3, 6).join(" ")}\n  vertex ${t.slice(6, 9).join(" ")}\n endloop\nendfacet`,
  );
  return `solid mesh\n${facets.join("\n")}\nendsolid mesh\n`;
}

/** A Wavefront OBJ: three vertices and one face per triangle. */
export function obj(tris: number[][]): string {
  const lines: string[] = [];
  tris.forEach((t, k) => {
    for (let i = 0; i < 3; i++) lines.push(`v ${t.slice(3 * i, 3 * i + 3).join(" ")}`);
    lines.push(`f ${3 * k + 1} ${3 * k + 2} ${3 * k + 3}`);
  });
  return `${lines.join("\n")}\n`;
}

/** The 12 outward (counter-clockwise) triangles of the box centred at c with half extents h. */
export function boxTriangles(c: V3, h: V3): number[][] {
  const corner = (i: number): V3 => [
    c[0] + (i & 1 ? h[0] : -h[0]),
    c[1] + (i & 2 ? h[1] : -h[1]),
    c[2] + (i & 4 ? h[2] : -h[2]),
  ];
  // faces as corner indices, counter-clockwise seen from outside
  const quads = [
    [0, 2, 3, 1], // −z
    [4, 5, 7, 6], // +z
    [0, 1, 5, 4], // −y
    [2, 6, 7, 3], // +y
    [0, 4, 6, 2], // −x
    [1, 3, 7, 5], // +x
  ];
  const out: number[][] = [];
  for (const [a, b, cc, d] of quads) {
    out.push([...corner(a), ...corner(b), ...corner(cc)]);
    out.push([...corner(a), ...corner(cc), ...corner(d)]);
  }
  return out;
}
