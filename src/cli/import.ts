/**
 * `moreau import robot.urdf [--out model.json]`: a URDF → a Moreau model, in this process
 * (src/formats/urdf/, the converter POST /v1/models/urdf runs). The mesh files the URDF
 * names are read from disk:
 *
 *   package://PKG/rest   --package PKG=DIR gives DIR/rest; else a folder named PKG that
 *                        holds the URDF (or is beside one of its parents) gives PKG/rest;
 *                        else rest beside the URDF or in its parent folder
 *   file:///abs/path     that path
 *   relative/path        relative to the URDF's folder
 *
 * A mesh file over MESH_MAX_BYTES is refused by its size, unread. Warnings go to standard
 * error; the model (JSON) to --out or standard output.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { type FileContent, MESH_MAX_BYTES, type UrdfImportOptionsIn } from "../../schemas/urdf";
import { importUrdf, issueLine, meshFilenames, UrdfImportError } from "../formats/urdf/index";
import { CliError } from "./model-file";

export interface ImportArgs {
  file: string;
  cwd: string;
  packages: Map<string, string>;
  options: UrdfImportOptionsIn;
}

export interface ImportOutcome {
  json: string;
  warnings: string[];
  /** mesh filenames of the URDF no file was found for */
  missing: string[];
}

/** Candidate paths of a <mesh filename>, most specific first. */
export function meshCandidates(
  filename: string,
  urdfDir: string,
  packages: Map<string, string>,
): string[] {
  const pkg = /^(?:package|model):\/\/([^/]+)\/(.*)$/.exec(filename);
  if (pkg) {
    const [, name, rest] = pkg;
    const out: string[] = [];
    const given = packages.get(name);
    if (given) out.push(join(given, rest));
    for (let dir = urdfDir; ; dir = dirname(dir)) {
      if (basename(dir) === name) out.push(join(dir, rest));
      out.push(join(dir, name, rest));
      if (dirname(dir) === dir) break;
    }
    out.push(join(urdfDir, rest), join(dirname(urdfDir), rest));
    return out;
  }
  if (filename.startsWith("file://")) {
    const p = decodeURIComponent(filename.slice("file://".length));
    return [isAbsolute(p) ? p : join(urdfDir, p)];
  }
  return [isAbsolute(filename) ? filename : join(urdfDir, filename)];
}

export async function importCommand(args: ImportArgs): Promise<ImportOutcome> {
  const path = resolve(args.cwd, args.file);
  let urdf: string;
  try {
    urdf = readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${args.file}: ${(err as Error).message}`);
  }
  const files: Record<string, FileContent> = {};
  const missing: string[] = [];
  for (const filename of meshFilenames(urdf)) {
    const found = meshCandidates(filename, dirname(path), args.packages).find(
      (p) => existsSync(p) && statSync(p).isFile(),
    );
    if (found === undefined) {
      missing.push(filename);
      continue;
    }
    const size = statSync(found).size;
    if (size > MESH_MAX_BYTES)
      throw new CliError(
        `mesh file ${found} (<mesh filename="${filename}">) has ${size} bytes; the limit is ${MESH_MAX_BYTES} (MESH_MAX_BYTES)`,
        1,
      );
    files[filename] = { base64: readFileSync(found).toString("base64") };
  }
  try {
    const r = await importUrdf({ urdf, files, options: args.options });
    return { json: `${JSON.stringify(r.model, null, 2)}\n`, warnings: r.warnings, missing };
  } catch (err) {
    if (err instanceof UrdfImportError)
      throw new CliError(
        `${args.file}: cannot import (${err.kind}):\n${err.issues.map((i) => `  ${issueLine(i)}`).join("\n")}`,
        1,
      );
    throw err;
  }
}
