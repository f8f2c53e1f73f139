/**
 * The engines of the comparison, loaded on demand so that a worker process imports only
 * the engine it runs.
 */
import type { SceneKind } from "../scene";
import type { EngineAdapter } from "./types";

export const ENGINE_KEYS = [
  "moreau",
  "moreau-defaults",
  "moreau-galpha-1",
  "moreau-galpha-0.9",
  "moreau-galpha-tol",
  "rapier",
  "cannon",
  "mujoco",
  "mujoco-cg",
  "ammo",
] as const;
export type EngineKey = (typeof ENGINE_KEYS)[number];

/**
 * The engines a plain `--compare` runs (`moreau-defaults` beside `moreau`: the same scenes
 * at the settings a user never changes, issue 29; Bullet through the WebAssembly ammo.js,
 * soft-body cloth included, issue 29) (the slow error-controlled generalized-α variant only
 * on request). The Moreau variants come right after "moreau", so that its rows sit together
 * and the rounds run them back to back.
 */
export const DEFAULT_ENGINES: EngineKey[] = [
  "moreau",
  "moreau-defaults",
  "moreau-galpha-1",
  "moreau-galpha-0.9",
  "rapier",
  "cannon",
  "mujoco",
  "mujoco-cg",
  "ammo",
];

/**
 * Engines that run only some kinds of scene (the rest run every scene): the generalized-α
 * variants of Moreau are set up for the chain (engines/moreau.ts); cannon-es and MuJoCo
 * skip the hulls on a triangle-mesh terrain (cannon-es has no convex–trimesh collision;
 * MuJoCo replaces every mesh geom by its convex hull, so a terrain would need a height
 * field, another scene).
 */
const NOT_HULLS = ["spheres", "chain", "cloth"] as const;
const SCENE_KINDS: Partial<Record<EngineKey, readonly SceneKind[]>> = {
  "moreau-galpha-1": ["chain"],
  "moreau-galpha-0.9": ["chain"],
  "moreau-galpha-tol": ["chain"],
  cannon: NOT_HULLS,
  mujoco: NOT_HULLS,
  "mujoco-cg": NOT_HULLS,
};

/** Whether the engine `key` runs scenes of this kind (a run skips the other pairs). */
export function engineRunsScene(key: string, kind: SceneKind): boolean {
  return SCENE_KINDS[key as EngineKey]?.includes(kind) ?? true;
}

/** Moreau itself or one of its variant rows: never a peer in the targets (targets.ts). */
export function isMoreau(key: string): boolean {
  return key === "moreau" || key.startsWith("moreau-");
}

export async function loadEngine(key: string): Promise<EngineAdapter> {
  switch (key) {
    case "moreau":
      return (await import("./moreau")).moreauEngine;
    case "moreau-defaults":
      return (await import("./moreau")).moreauDefaultsEngine;
    case "moreau-galpha-1":
    case "moreau-galpha-0.9":
    case "moreau-galpha-tol":
      return (await import("./moreau")).moreauGeneralizedAlphaEngines[key];
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
