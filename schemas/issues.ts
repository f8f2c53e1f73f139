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
