/**
 * The analysis as the service answers it: engine's assemble (analysis/assembly.ts) and its
 * wire form (simulation/assembly-result.ts), with the same arguments.
 */
import type { AssemblyOptionsSpec, AssemblyResultOut } from "../../../schemas/state";
import { type AssemblyContext, assemble as analyse } from "../../../src/engine/analysis/assembly";
import type { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import type { BodySystem } from "../../../src/engine/model/body-system";
import { assemblyResultOut } from "../../../src/engine/simulation/assembly-result";

export function assemble(
  sys: BodySystem,
  set: ConstraintSet,
  computeForces: (t: number, out: Float64Array) => void,
  t: number,
  options: AssemblyOptionsSpec,
  context: AssemblyContext = {},
): AssemblyResultOut {
  return assemblyResultOut(sys, set, analyse(sys, set, computeForces, t, options, context));
}
