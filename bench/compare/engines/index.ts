/**
 * The engines of the comparison, loaded on demand so that a worker process imports only
 * the engine it runs.
 */
import type { EngineAdapter } from "./types";

export const ENGINE_KEYS = ["moreau", "rapier", "cannon", "mujoco", "mujoco-cg", "ammo"] as const;
export type EngineKey = (typeof ENGINE_KEYS)[number];

/** The engines a plain `--compare` runs (ammo, the old Bullet build, only on request). */
export const DEFAULT_ENGINES: EngineKey[] = ["moreau", "rapier", "cannon", "mujoco", "mujoco-cg"];

export async function loadEngine(key: string): Promise<EngineAdapter> {
  switch (key) {
    case "moreau":
      return (await import("./moreau")).moreauEngine;
    case "rapier":
      return (await import("./rapier")).rapierEngine;
    case "cannon":
      return (await import("./cannon")).cannonEngine;
    case "mujoco":
      return (await import("./mujoco")).mujocoEngine;
    case "mujoco-cg":
      return (await import("./mujoco")).mujocoCgEngine;
    case "ammo":
      return (await import("./ammo")).ammoEngine;
    default:
      throw new Error(`unknown engine "${key}"; known: ${ENGINE_KEYS.join(", ")}`);
  }
}
