/** The model files of examples/, as the tests read them. */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Q4, V3 } from "./quat";

export const EXAMPLES_DIR = resolve(import.meta.dirname, "../../examples");

/** A model file as a plain object (only what the tests read is typed). */
export interface ExampleModel {
  name: string;
  gravity?: V3;
  bodies: {
    id: string;
    kind?: "rigid" | "particle";
    fixed?: boolean;
    mass?: number;
    position?: V3;
    orientation?: Q4;
    inertia?: V3;
    shapes?: { type: string; radius?: number; halfLength?: number; halfExtents?: V3 }[];
  }[];
  forces?: {
    id: string;
    type: string;
    a: { body?: string; point?: V3 };
    b: { body?: string; point?: V3 };
    stiffness: number;
    restLength?: number;
  }[];
  joints?: {
    id: string;
    type: string;
    a: { body: string; point: V3 };
    b: { body: string; point: V3 };
  }[];
  solver: { dt: number; integrator?: string };
  [k: string]: unknown;
}

/** The file names (`<name>.json`) of examples/, sorted. */
export function exampleFiles(): string[] {
  return readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
}

/** examples/<name>.json, parsed (typed as ExampleModel unless the caller says otherwise). */
export function readExample<T = ExampleModel>(name: string): T {
  return JSON.parse(readFileSync(join(EXAMPLES_DIR, `${name}.json`), "utf8")) as T;
}
