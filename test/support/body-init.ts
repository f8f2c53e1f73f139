/**
 * The description of one body as BodySystem takes it (BodyInit), for tests that build a
 * BodySystem directly: the fields a test does not give take the values below.
 */
import type { BodyInit } from "../../src/engine/model/body-system";

/**
 * A dynamic body of 1 kg with the identity inertia (kg·m²; ignored for a particle), at rest
 * at the origin, unrotated — unless `fields` says otherwise.
 */
export function bodyInit(
  id: string,
  kind: BodyInit["kind"],
  fields: Partial<Omit<BodyInit, "id" | "kind">> = {},
): BodyInit {
  return {
    id,
    kind,
    fixed: false,
    mass: 1,
    inertia: [1, 0, 0, 0, 1, 0, 0, 0, 1],
    position: [0, 0, 0],
    orientation: [1, 0, 0, 0],
    velocity: [0, 0, 0],
    angularVelocity: [0, 0, 0],
    ...fields,
  };
}
