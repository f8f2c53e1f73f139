/**
 * URDF import: the URDF text and its uploaded mesh files → a Moreau model and warnings.
 *
 *   importUrdf({ urdf, files, options })  // { model, warnings }; throws UrdfImportError
 *
 * Stages, each failing with every issue it found (element and line, or file):
 * xml.ts (well-formed XML) → parse.ts (the URDF elements, numbers checked) → tree.ts (one
 * root, no cycles, link poses) → mesh.ts (the referenced mesh files read and checked) →
 * convert.ts (bodies, shapes, joints, actuators) → the model validated by schemas/model.ts.
 * Pure and synchronous; the service runs it in a solver worker (its input is bounded by
 * MAX_MODEL_BYTES, MESH_MAX_BYTES and MESH_MAX_TRIANGLES).
 */
import { type Issue, issuesOf } from "../../../schemas/issues";
import { Model, type ModelInput } from "../../../schemas/model";
import {
  type FileContent,
  UrdfImportBody,
  type UrdfImportBodySpec,
  type UrdfImportResultOut,
} from "../../../schemas/urdf";
import { convert } from "./convert";
import { Issues, UrdfImportError, type UrdfIssue } from "./errors";
import { findFile, type MeshFile, type MeshLoaders, meshLoaders, readMesh } from "./mesh";
import { readRobot, type UrdfRobot } from "./parse";
import { buildTree } from "./tree";
import { parseXml, type XmlElement } from "./xml";

export { convexShapeSupported } from "./convert";
export { issueLine, UrdfImportError, type UrdfIssue } from "./errors";
export { findFile } from "./mesh";

export interface ImportLimits {
  /** bodies a model may have (MAX_BODIES); more links are refused (too_large) */
  maxBodies?: number;
}

/**
 * The <mesh filename> values of a URDF text, in document order, each once (for a caller
 * that finds the files, as the command line does); [] when the text is not well-formed XML
 * (the import then reports it).
 */
export function meshFilenames(urdf: string): string[] {
  let root: XmlElement;
  try {
    root = parseXml(urdf);
  } catch {
    return [];
  }
  const out = new Set<string>();
  const visit = (el: XmlElement) => {
    if (el.name === "mesh" && el.attrs.filename) out.add(el.attrs.filename);
    for (const c of el.children) visit(c);
  };
  visit(root);
  return [...out];
}

/** Imports a URDF (the request body as posted, defaults optional). */
export async function importUrdf(
  body: { urdf: string; files?: Record<string, FileContent>; options?: unknown },
  limits: ImportLimits = {},
): Promise<UrdfImportResultOut> {
  const parsed = UrdfImportBody.safeParse(body);
  if (!parsed.success)
    throw new UrdfImportError(
      issuesOf(parsed.error).map((i) => ({ ...i, code: "invalid" as const })),
    );
  return importParsed(parsed.data, limits);
}

/** Imports a validated request body. */
export async function importParsed(
  body: UrdfImportBodySpec,
  limits: ImportLimits = {},
): Promise<UrdfImportResultOut> {
  const issues = new Issues();
  const warnings: string[] = [];
  const robot = readRobot(parseXml(body.urdf), issues);
  if (limits.maxBodies !== undefined && robot.links.length > limits.maxBodies)
    throw new UrdfImportError([
      {
        path: ["urdf"],
        element: "robot",
        line: robot.el.line,
        message: `the robot has ${robot.links.length} links; the limit is ${limits.maxBodies} bodies (MAX_BODIES)`,
        code: "too_large",
      },
    ]);
  const tree = buildTree(robot, issues);
  const loaders = Object.keys(body.files).length > 0 ? await meshLoaders() : null;
  const meshes = readMeshes(robot, body.files, loaders, issues, warnings);
  issues.check();
  const inertias: Inertias = new Map();
  const model = convert({ robot, tree, meshes, options: body.options, issues, warnings, inertias });
  issues.check();
  let checked = Model.safeParse(model);
  if (!checked.success && body.options.balanceInertia) {
    balanceInertias(model, issuesOf(checked.error), inertias, warnings);
    checked = Model.safeParse(model);
  }
  if (!checked.success)
    throw new UrdfImportError(
      issuesOf(checked.error).map(
        (i) =>
          inertiaIssue(model, i, inertias) ?? {
            path: ["model", ...i.path],
            message: `the imported model is invalid: ${i.message}`,
            code: "invalid" as const,
          },
      ),
    );
  return { model: checked.data, warnings };
}

/** Each moving body's top link and the <inertia> element of its inertia, by body id (convert.ts). */
type Inertias = Map<string, { link: string; el: XmlElement }>;

/**
 * The body and its link when a schema issue is about a body's inertia ([bodies, i,
 * inertia]); the issue's text without its `body "id": ` prefix. The importer has already
 * refused tensors that are not positive definite (convert.ts), so what schemas/model.ts
 * still refuses there is principal moments breaking the triangle inequality I₃ ≤ I₁ + I₂.
 */
function inertiaOf(model: ModelInput, i: Issue, inertias: Inertias) {
  if (i.path.length !== 3 || i.path[0] !== "bodies" || i.path[2] !== "inertia") return null;
  const b = model.bodies[i.path[1] as number];
  const at = inertias.get(b.id);
  if (at === undefined) return null;
  const prefix = `body "${b.id}": `;
  const detail = i.message.startsWith(prefix) ? i.message.slice(prefix.length) : i.message;
  return { body: b, ...at, detail };
}

/** An inertia the model refuses, reported at the link's <inertia> element with its cure. */
function inertiaIssue(model: ModelInput, i: Issue, inertias: Inertias): UrdfIssue | null {
  const it = inertiaOf(model, i, inertias);
  if (it === null) return null;
  return {
    path: ["urdf"],
    element: it.el.name,
    line: it.el.line,
    message: `link "${it.link}": ${it.detail} (about the centre of mass; lumped links included); correct the <inertia>, or import with options.balanceInertia: true (CLI --balance-inertia), which sets the principal moments to their mean as MuJoCo's compiler balanceinertia does`,
    code: "invalid",
  };
}

/**
 * options.balanceInertia: as MuJoCo's compiler (`balanceinertia`: "set all three diagonal
 * elements to their average value whenever [A + B ≥ C] is violated", applied to the
 * principal moments): each principal moment becomes their mean tr I / 3, so the tensor,
 * rotated back from its principal axes, is (tr I / 3)·1 whatever those axes are. The
 * trace tr I = 2∫|r|² dm is kept; the result is a uniform sphere's, for which the triangle
 * inequality holds (tr/3 ≤ 2 tr/3). A warning names the link, the moments before and after.
 */
function balanceInertias(
  model: ModelInput,
  issues: readonly Issue[],
  inertias: Inertias,
  warnings: string[],
): void {
  for (const i of issues) {
    const it = inertiaOf(model, i, inertias);
    if (it === null || it.body.inertia === undefined) continue;
    const I = it.body.inertia;
    const trace =
      typeof I[0] === "number"
        ? (I as number[]).reduce((s, x) => s + x, 0)
        : (I as number[][]).reduce((s, row, k) => s + row[k], 0);
    const mean = trace / 3;
    it.body.inertia = [mean, mean, mean];
    const g = (x: number) => Number(x.toPrecision(6));
    warnings.push(
      `link "${it.link}": ${it.detail}; balanced as MuJoCo's compiler balanceinertia does: the principal moments set to their mean, [${g(mean)}, ${g(mean)}, ${g(mean)}] kg·m² (options.balanceInertia)`,
    );
  }
}

/**
 * Every uploaded file a <mesh> refers to, read and checked once (a problem names the file
 * and the first <mesh> element using it); files nobody refers to are a warning.
 */
function readMeshes(
  robot: UrdfRobot,
  files: Record<string, FileContent>,
  loaders: MeshLoaders | null,
  issues: Issues,
  warnings: string[],
): Map<string, MeshFile> {
  const names = Object.keys(files);
  const byFile = new Map<string, MeshFile | null>();
  const out = new Map<string, MeshFile>();
  const used = new Set<string>();
  for (const link of robot.links)
    for (const g of [...link.collisions, ...link.visuals]) {
      if (g.geometry.type !== "mesh") continue;
      const filename = g.geometry.filename;
      const file = findFile(names, filename);
      if (file === null || loaders === null) continue;
      used.add(file);
      if (!byFile.has(file)) {
        const r = readMesh(file, files[file], loaders);
        if ("triangles" in r) byFile.set(file, r);
        else {
          byFile.set(file, null);
          issues.add({
            path: ["files", file],
            element: g.geometryEl.name,
            line: g.geometryEl.line,
            file,
            message: r.message,
            code: r.code,
          });
        }
      }
      const mesh = byFile.get(file);
      if (mesh) out.set(filename, mesh);
    }
  const unused = names.filter((n) => !used.has(n));
  if (unused.length > 0)
    warnings.push(`uploaded files no <mesh> refers to: ${unused.map((n) => `"${n}"`).join(", ")}`);
  return out;
}
