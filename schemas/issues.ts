/**
 * The issue format of every validation error the service and the engine report: zod's
 * issues as `{ path, message }` with the path from the validated document's root
 * (symbols, which JSON cannot carry, as strings).
 */
import type { z } from "zod";

export interface Issue {
  path: (string | number)[];
  message: string;
}

export function issuesOf(error: z.ZodError): Issue[] {
  return error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
    message: i.message,
  }));
}

/** One issue as text: "bodies.0.mass: expected number" (an empty path reads "(root)"). */
export function issueText(i: Issue): string {
  return `${i.path.join(".") || "(root)"}: ${i.message}`;
}

/** The first `max` issues as text joined by "; ", and how many more there are. */
export function issuesSummary(issues: readonly Issue[], max = Number.POSITIVE_INFINITY): string {
  const shown = issues.slice(0, max).map(issueText).join("; ");
  return issues.length > max ? `${shown}; and ${issues.length - max} more` : shown;
}

/** Issues of a part seen from the enclosing document's root: `prefix` before each path. */
export function underPath<I extends Issue>(
  prefix: readonly (string | number)[],
  issues: readonly I[],
): I[] {
  return issues.map((i) => ({ ...i, path: [...prefix, ...i.path] }));
}
