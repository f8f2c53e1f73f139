/** Total potential energy (J) stored by a set of force effectors. */
import type { ForceEffector } from "./effector";

export function potentialEnergy(effectors: readonly ForceEffector[]): number {
  let e = 0;
  for (let k = 0; k < effectors.length; k++) e += effectors[k].potentialEnergy();
  return e;
}
