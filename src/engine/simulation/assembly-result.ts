/**
 * The wire form of an assembly analysis (schemas/state.ts AssemblyResultOut): the bodies'
 * consistent state (read from the BodySystem the analysis wrote) with their accelerations,
 * and, when the acceleration level ran, each constraint's reaction: the force and torque
 * on its body b (world; N, N·m about its point on b) of the constraint force −Gᵀλ.
 */
import type { AssemblyResultOut } from "../../../schemas/state";
import type { Assembly } from "../analysis/assembly";
import type { ConstraintSet } from "../constraints/constraint-set";
import { BodyKind, type BodySystem } from "../model/body-system";

function vec3(a: Float64Array, o: number): [number, number, number] {
  return [a[o], a[o + 1], a[o + 2]];
}

export function assemblyResultOut(
  sys: BodySystem,
  set: ConstraintSet,
  a: Assembly,
): AssemblyResultOut {
  const acc = a.accelerations;
  const bodies: AssemblyResultOut["bodies"] = [];
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    const rigidDyn = d >= 0 && sys.kind[b] === BodyKind.RIGID;
    bodies.push({
      id: sys.ids[b],
      position: vec3(sys.pos, 3 * b),
      orientation: [sys.quat[4 * b], sys.quat[4 * b + 1], sys.quat[4 * b + 2], sys.quat[4 * b + 3]],
      velocity: vec3(sys.vel, 3 * b),
      angularVelocity: vec3(sys.omega, 3 * b),
      acceleration: d >= 0 ? vec3(acc, d) : [0, 0, 0],
      angularAcceleration: rigidDyn ? vec3(acc, d + 3) : [0, 0, 0],
    });
  }
  const reactions: AssemblyResultOut["reactions"] = [];
  const lambda = a.multipliers;
  if (lambda !== null) {
    const F = new Float64Array(3);
    const T = new Float64Array(3);
    set.constraints.forEach((con, k) => {
      // Constraint force −Gᵀλ: the constraint.ts reaction of −λ.
      set.reaction(k, lambda, F, T, -1);
      const o = set.rowOffset[k];
      reactions.push({
        id: con.id,
        force: vec3(F, 0),
        torque: vec3(T, 0),
        multipliers: Array.from(lambda.subarray(o, o + con.rows)),
      });
    });
  }
  return {
    exitFlag: a.exitFlag,
    iterations: a.iterations,
    residualNorm: a.residualNorm,
    updateNorm: a.updateNorm,
    accelerationResidual: a.accelerationResidual,
    bodies,
    reactions,
    warnings: a.warnings,
  };
}
