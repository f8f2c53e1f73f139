/**
 * Mesh files referenced by a URDF's <mesh filename="…">: found among the uploaded files,
 * decoded, read by three.js's STLLoader (binary and ASCII STL) and OBJLoader (Wavefront
 * OBJ), and checked: a size limit before anything is decoded or parsed (MESH_MAX_BYTES),
 * a triangle limit (MESH_MAX_TRIANGLES), finite vertices, no degenerate (zero-area)
 * triangles. Mesh coordinates are in metres in the frame of the geometry's <origin>,
 * multiplied by the <mesh scale>.
 *
 * three's loaders report malformed text on the console instead of throwing (STLLoader: a
 * face without three vertices; OBJLoader: an unexpected line); those messages are caught
 * while a file is read (synchronously) and turned into issues naming the file.
 */
import { type FileContent, MESH_MAX_BYTES, MESH_MAX_TRIANGLES } from "../../../schemas/urdf";
import type { UrdfIssue } from "./errors";

/** The loaders, imported on first use (three.js is large; most imports upload no mesh). */
export interface MeshLoaders {
  STLLoader: typeof import("three/examples/jsm/loaders/STLLoader.js").STLLoader;
  OBJLoader: typeof import("three/examples/jsm/loaders/OBJLoader.js").OBJLoader;
}

let loaders: Promise<MeshLoaders> | null = null;

export function meshLoaders(): Promise<MeshLoaders> {
  loaders ??= Promise.all([
    import("three/examples/jsm/loaders/STLLoader.js"),
    import("three/examples/jsm/loaders/OBJLoader.js"),
  ]).then(([stl, obj]) => ({ STLLoader: stl.STLLoader, OBJLoader: obj.OBJLoader }));
  return loaders;
}

/**
 * A mesh file read for the URDF import: its name and its triangle soup (the engine's
 * indexed collision mesh is geometry/mesh.ts TriangleMesh).
 */
export interface MeshFile {
  /** the uploaded file's name */
  file: string;
  /** 9 numbers per triangle: the three corners' x y z (m, in the mesh's own frame, unscaled) */
  triangles: Float32Array;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A file's content: a string is base64 when it is nothing else (no spaces, length ÷ 4), else UTF-8 text. */
export function isBase64(s: string): boolean {
  return s.length % 4 === 0 && s.length > 0 && BASE64.test(s);
}

/** The byte length a file's content decodes to, without decoding it. */
export function decodedLength(c: FileContent): number {
  if (typeof c === "string") return isBase64(c) ? base64Length(c) : Buffer.byteLength(c, "utf8");
  if ("base64" in c) return base64Length(c.base64);
  return Buffer.byteLength(c.text, "utf8");
}

function base64Length(s: string): number {
  const t = s.replace(/\s+/g, "");
  return Math.floor((t.length * 3) / 4) - (t.endsWith("==") ? 2 : t.endsWith("=") ? 1 : 0);
}

export function decode(c: FileContent): Uint8Array {
  if (typeof c === "string") return isBase64(c) ? Buffer.from(c, "base64") : Buffer.from(c, "utf8");
  if ("base64" in c) return Buffer.from(c.base64, "base64");
  return Buffer.from(c.text, "utf8");
}

/**
 * The uploaded file a <mesh filename> refers to: the key equal to the filename, to it
 * without its scheme (package://, file://, model://), or the longest key that ends it after
 * a "/" ("meshes/link1.stl", "link1.stl" for "package://arm/meshes/link1.stl"). null: none.
 */
export function findFile(names: readonly string[], filename: string): string | null {
  if (names.includes(filename)) return filename;
  const bare = filename.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  if (names.includes(bare)) return bare;
  let best: string | null = null;
  for (const n of names)
    if (bare.endsWith(`/${n.replace(/^\.?\//, "")}`) && (best === null || n.length > best.length))
      best = n;
  return best;
}

type Problem = Omit<UrdfIssue, "path" | "file" | "element" | "line">;

/** Reads and checks one mesh file; a problem (invalid or too_large) instead when it fails. */
export function readMesh(
  file: string,
  content: FileContent,
  loaders: MeshLoaders,
): MeshFile | Problem {
  const bytes = decodedLength(content);
  if (bytes > MESH_MAX_BYTES)
    return {
      code: "too_large",
      message: `mesh file "${file}" has ${bytes} bytes; the limit is ${MESH_MAX_BYTES} (MESH_MAX_BYTES)`,
    };
  const ext = /\.([A-Za-z0-9]+)$/.exec(file)?.[1]?.toLowerCase();
  if (ext !== "stl" && ext !== "obj")
    return {
      code: "unsupported",
      message: `mesh file "${file}": the format ${ext ? `.${ext}` : "(no extension)"} is not read (STL and OBJ are)`,
    };
  const data = decode(content);
  const declared = declaredTriangles(ext, data);
  if (declared > MESH_MAX_TRIANGLES)
    return {
      code: "too_large",
      message: `mesh file "${file}" has ${declared} triangles; the limit is ${MESH_MAX_TRIANGLES} (MESH_MAX_TRIANGLES)`,
    };
  const parsed = ext === "stl" ? parseStl(file, data, loaders) : parseObj(file, data, loaders);
  if ("code" in parsed) return parsed;
  return checkTriangles(file, parsed);
}

/**
 * The triangles a file holds, counted before it is parsed (so that a file of many small
 * faces is refused before the loader spends seconds on it): a binary STL's header count,
 * an ASCII STL's facets, an OBJ's faces (a polygon of n corners is n − 2 triangles).
 */
function declaredTriangles(ext: "stl" | "obj", data: Uint8Array): number {
  const text = () => Buffer.from(data).toString("latin1");
  if (ext === "stl") {
    const binary = data.byteLength >= 84 && !/^\s*solid/.test(text().slice(0, 8));
    if (binary) {
      // a header count that does not fit the size is reported by parseStl
      const n = new DataView(data.buffer, data.byteOffset, 84).getUint32(80, true);
      return 84 + 50 * n === data.byteLength ? n : 0;
    }
    return text().match(/\bfacet\s+normal\b/g)?.length ?? 0;
  }
  let n = 0;
  for (const m of text().matchAll(/^[ \t]*f[ \t]+([^\n]*)/gm))
    n += Math.max(1, m[1].trim().split(/\s+/).length - 2);
  return n;
}

/** Runs a loader with console.error/warn caught; the messages it printed. */
function quietly<T>(f: () => T): { value: T | null; messages: string[]; thrown: string | null } {
  const messages: string[] = [];
  const { error, warn } = console;
  console.error = (...a: unknown[]) => messages.push(a.map(String).join(" "));
  console.warn = console.error;
  try {
    return { value: f(), messages, thrown: null };
  } catch (err) {
    return { value: null, messages, thrown: (err as Error)?.message ?? String(err) };
  } finally {
    console.error = error;
    console.warn = warn;
  }
}

function loaderProblem(file: string, messages: string[], thrown: string | null): Problem {
  const all = [...messages, ...(thrown ? [thrown] : [])].map((m) => m.replace(/^THREE\./, ""));
  const shown = all.slice(0, 3).join("; ");
  return {
    code: "invalid",
    message: `mesh file "${file}" is malformed: ${shown}${all.length > 3 ? `; and ${all.length - 3} more` : ""}`,
  };
}

function parseStl(
  file: string,
  data: Uint8Array,
  { STLLoader }: MeshLoaders,
): Float32Array | Problem {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const head = Buffer.from(data.subarray(0, 8)).toString("latin1");
  const ascii = /^(\uFEFF|\xEF\xBB\xBF)?\s*solid/.test(head);
  const declared = data.byteLength >= 84 ? view.getUint32(80, true) : -1;
  const binaryFits = declared >= 0 && 84 + 50 * declared === data.byteLength;
  if (!binaryFits && !ascii)
    return {
      code: "invalid",
      message:
        declared < 0
          ? `mesh file "${file}" is not an STL: ${data.byteLength} bytes, neither ASCII ("solid …") nor a binary STL's 84-byte header`
          : `mesh file "${file}": a binary STL declaring ${declared} triangles has ${84 + 50 * declared} bytes, this one ${data.byteLength}`,
    };
  // the loader takes an ArrayBuffer (binary) or a string (ASCII)
  const buffer = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const r = quietly(() => new STLLoader().parse(buffer as ArrayBuffer));
  if (r.value === null || r.messages.length > 0) return loaderProblem(file, r.messages, r.thrown);
  return r.value.getAttribute("position").array;
}

function parseObj(
  file: string,
  data: Uint8Array,
  { OBJLoader }: MeshLoaders,
): Float32Array | Problem {
  const text = Buffer.from(data).toString("utf8");
  const r = quietly(() => new OBJLoader().parse(text));
  if (r.value === null || r.messages.length > 0) return loaderProblem(file, r.messages, r.thrown);
  const parts: Float32Array[] = [];
  r.value.traverse((o: unknown) => {
    const m = o as { isMesh?: boolean; geometry?: { getAttribute(n: string): { array: unknown } } };
    if (m.isMesh && m.geometry)
      parts.push(m.geometry.getAttribute("position").array as Float32Array);
  });
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Finite corners, a triangle limit, no zero-area triangle (relative to the mesh's size). */
function checkTriangles(file: string, t: Float32Array): MeshFile | Problem {
  const n = Math.floor(t.length / 9);
  if (n === 0 || t.length % 9 !== 0)
    return { code: "invalid", message: `mesh file "${file}" has no triangles` };
  if (n > MESH_MAX_TRIANGLES)
    return {
      code: "too_large",
      message: `mesh file "${file}" has ${n} triangles; the limit is ${MESH_MAX_TRIANGLES} (MESH_MAX_TRIANGLES)`,
    };
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < t.length; i++) {
    const x = t[i];
    if (!Number.isFinite(x)) {
      const tri = Math.floor(i / 9);
      return {
        code: "invalid",
        message: `mesh file "${file}": corner ${Math.floor((i % 9) / 3) + 1} of triangle ${tri + 1} is not finite (a NaN or infinite coordinate in the file, or a face index out of range)`,
      };
    }
    if (x < lo[i % 3]) lo[i % 3] = x;
    if (x > hi[i % 3]) hi[i % 3] = x;
  }
  const diag2 = (hi[0] - lo[0]) ** 2 + (hi[1] - lo[1]) ** 2 + (hi[2] - lo[2]) ** 2;
  const degenerate: number[] = [];
  for (let k = 0; k < n; k++) {
    const o = 9 * k;
    const ux = t[o + 3] - t[o];
    const uy = t[o + 4] - t[o + 1];
    const uz = t[o + 5] - t[o + 2];
    const vx = t[o + 6] - t[o];
    const vy = t[o + 7] - t[o + 1];
    const vz = t[o + 8] - t[o + 2];
    const cx = uy * vz - uz * vy;
    const cy = uz * vx - ux * vz;
    const cz = ux * vy - uy * vx;
    // twice the area against the size of the mesh: exactly zero for repeated or collinear
    // corners, rounding-sized for float32 coordinates of a sliver
    if (Math.hypot(cx, cy, cz) <= 1e-12 * diag2) degenerate.push(k + 1);
  }
  if (degenerate.length > 0)
    return {
      code: "invalid",
      message: `mesh file "${file}": ${degenerate.length} degenerate (zero-area) triangle${degenerate.length === 1 ? "" : "s"} of ${n}, e.g. triangle ${degenerate.slice(0, 5).join(", ")}`,
    };
  return { file, triangles: t };
}
