/**
 * Builds the force effectors of a validated model: one per ForceSpec, plus gravity (always)
 * and the gyroscopic term (when the model has a dynamic rigid body; `gyroscopicJacobian`:
 * whether its Jacobians enter the iteration matrix, gyroscopic.ts). Body ids resolve with
 * sys.index, "ground" to −1. The schema already rejects unknown ids; this check repeats it
 * for programmatic callers, naming the force and the body. Springs without a restLength
 * take the distance between their points in the configuration sys holds (the model's
 * initial one when called from the loader); frame springs take their rotational rest state
 * from it as well.
 */
import type { ForceSpec } from "../../../schemas/model";
import type { BodySystem } from "../model/body-system";
import { DamperEffector } from "./damper";
import type { ForceEffector } from "./effector";
import { FrameSpringEffector } from "./frame-spring";
import { GravityEffector } from "./gravity";
import { GyroscopicEffector } from "./gyroscopic";
import { isTranslationalEnd, type ParticleSpring, ParticleSpringSet } from "./particle-springs";
import { PointForceEffector } from "./point-force";
import { SpringEffector } from "./spring";

export function createForceEffectors(
  forces: readonly ForceSpec[],
  sys: BodySystem,
  gravity: ArrayLike<number>,
  /** solver.gyroscopicJacobian as resolved (simulation/solver-defaults.ts, its one default). */
  gyroscopicJacobian: boolean,
): { effectors: ForceEffector[]; gravity: GravityEffector } {
  const g = new GravityEffector(sys, gravity);
  const effectors: ForceEffector[] = [g];
  const gyroscopic = new GyroscopicEffector(sys, "gyroscopic", gyroscopicJacobian);
  if (gyroscopic.bodies.length > 0) effectors.push(gyroscopic);
  // Springs between points without rotational dofs (particles, fixed bodies, ground)
  // share one vectorized effector (particle-springs.ts), placed where the first one is.
  const grouped: ParticleSpring[] = [];
  let groupAt = -1;
  for (const spec of forces) {
    if (spec.type === "spring") {
      const a = resolveBody(sys, spec.id, spec.a.body);
      const b = resolveBody(sys, spec.id, spec.b.body);
      if (isTranslationalEnd(sys, a) && isTranslationalEnd(sys, b)) {
        if (groupAt < 0) groupAt = effectors.length;
        grouped.push({
          bodyA: a,
          pointA: spec.a.point,
          bodyB: b,
          pointB: spec.b.point,
          stiffness: spec.stiffness,
          damping: spec.damping,
          restLength: spec.restLength,
        });
        continue;
      }
    }
    effectors.push(createForceEffector(spec, sys));
  }
  if (grouped.length > 0)
    effectors.splice(groupAt, 0, new ParticleSpringSet(sys, "particle-springs", grouped));
  return { effectors, gravity: g };
}

/** Body index of a body id for force `forceId` ("ground" → −1). */
function resolveBody(sys: BodySystem, forceId: string, body: string | undefined): number {
  if (body === undefined || body === "ground") return -1;
  const i = sys.index.get(body);
  if (i === undefined) throw new Error(`force "${forceId}" refers to unknown body "${body}"`);
  return i;
}

export function createForceEffector(spec: ForceSpec, sys: BodySystem): ForceEffector {
  switch (spec.type) {
    case "spring":
      return new SpringEffector(sys, {
        id: spec.id,
        bodyA: resolveBody(sys, spec.id, spec.a.body),
        pointA: spec.a.point,
        bodyB: resolveBody(sys, spec.id, spec.b.body),
        pointB: spec.b.point,
        stiffness: spec.stiffness,
        damping: spec.damping,
        restLength: spec.restLength,
      });
    case "pointForce":
      return new PointForceEffector(sys, {
        id: spec.id,
        body: resolveBody(sys, spec.id, spec.at.body),
        point: spec.at.point,
        force: spec.force,
        torque: spec.torque,
        frame: spec.frame,
      });
    case "frameSpring":
      return new FrameSpringEffector(sys, {
        id: spec.id,
        bodyA: resolveBody(sys, spec.id, spec.a.body),
        pointA: spec.a.point,
        bodyB: resolveBody(sys, spec.id, spec.b.body),
        pointB: spec.b.point,
        stiffness: spec.stiffness,
        rotaryStiffness: spec.rotaryStiffness,
        damping: spec.damping,
        rotaryDamping: spec.rotaryDamping,
      });
    case "damper":
      return new DamperEffector(sys, {
        id: spec.id,
        bodies: spec.bodies?.map((id) => resolveBody(sys, spec.id, id)),
        linear: spec.linear,
        angular: spec.angular,
      });
    default: {
      const unknown: never = spec;
      throw new Error(`unknown force type in ${JSON.stringify(unknown)}`);
    }
  }
}
