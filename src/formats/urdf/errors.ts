/**
 * The URDF importer's problems. Every problem names where it is: the XML element and its
 * line (1-based) in the URDF text, or the uploaded mesh file. They are collected, so one
 * answer lists every problem found at a stage, and thrown together as a UrdfImportError
 * whose kind says how the service answers it:
 *
 *   invalid      the URDF or a mesh is malformed (bad XML, a missing link, cyclic joints,
 *                two roots, an unknown joint type, NaN or non-numeric numbers, a link that
 *                moves without a mass, a degenerate mesh): 400 invalid_urdf
 *   unsupported  well-formed URDF that Moreau cannot represent (a collision <mesh>
 *                without a convex shape, a planar joint, an unexpanded xacro macro): 422 unsupported_urdf
 *   too_large    a mesh file over the size or triangle limits, more links than MAX_BODIES:
 *                413 payload_too_large
 */

export type UrdfIssueCode = "invalid" | "unsupported" | "too_large";

export interface UrdfIssue {
  /** where in the request: ["urdf"] for the URDF text, ["files", name] for a mesh file */
  path: (string | number)[];
  /** the XML element's tag, e.g. "joint", "mesh", "inertia" */
  element?: string;
  /** the element's line in the URDF text (1-based) */
  line?: number;
  /** the uploaded (or, on the command line, read) mesh file */
  file?: string;
  message: string;
  code: UrdfIssueCode;
}

/** The answer when issues of several kinds are found: a size refusal, else malformed input, else unsupported. */
const PRECEDENCE: UrdfIssueCode[] = ["too_large", "invalid", "unsupported"];

export class UrdfImportError extends Error {
  readonly kind: UrdfIssueCode;
  constructor(readonly issues: UrdfIssue[]) {
    super(summary(issues));
    this.name = "UrdfImportError";
    this.kind = PRECEDENCE.find((k) => issues.some((i) => i.code === k)) ?? "invalid";
  }
}

/** "line 12 <joint>: …; line 30 <mesh>: …" (three at most, then how many more). */
function summary(issues: readonly UrdfIssue[]): string {
  const text = issues.slice(0, 3).map(issueLine).join("; ");
  return issues.length > 3 ? `${text}; and ${issues.length - 3} more` : text;
}

/** One issue as a line of text: `line 12 <joint name="j1">: message` or `file a.stl: message`. */
export function issueLine(i: UrdfIssue): string {
  const where = [
    i.line !== undefined ? `line ${i.line}` : null,
    i.element !== undefined ? `<${i.element}>` : null,
    i.file !== undefined && i.element === undefined ? `file ${i.file}` : null,
  ]
    .filter((s) => s !== null)
    .join(" ");
  return where ? `${where}: ${i.message}` : i.message;
}

/**
 * Collects issues while a stage runs; `check()` throws them all at the end of the stage
 * (later stages rely on what this one validated).
 */
export class Issues {
  readonly list: UrdfIssue[] = [];

  add(issue: UrdfIssue): void {
    this.list.push(issue);
  }

  /** A problem of an element of the URDF text. */
  at(el: { name: string; line: number }, message: string, code: UrdfIssueCode = "invalid"): void {
    this.list.push({ path: ["urdf"], element: el.name, line: el.line, message, code });
  }

  check(): void {
    if (this.list.length > 0) throw new UrdfImportError(this.list);
  }
}
