/**
 * The cost of the impact events at the defaults (src/engine/integrators/impact-events.ts):
 * contact detections a step (NonsmoothContact.updateIndexSet calls, the step's own and the
 * events' `next`) and steps/s, on
 *  - chain: a 6-link chain of boxes (S2's links: 0.1 m, 0.1 kg, spherical joints) hinged
 *    0.35 m above a floor, released level, swinging onto it and coming to lie on it
 *    (Moreau–Jean θ = ½, e = 0 and ½, μ = 0.5; h = 1/240 and 1/100 s), 5 s;
 *  - pendulums (pendulumsOverFloor, test/support/models.ts): three bobs on 0.5 m arms hinged 0.59 m over a floor
 *    and a ball bouncing beside them (e = 1, μ = 0, 5 ms), 10 s; and with 80 spheres resting
 *    on the floor beside them (85 shapes: above ContactClearance's 64 until 2026-12-07);
 *  - spinning ball: a ball (R = 0.1 m) spinning at 0.05 rad/s about x dropped from 0.5 m
 *    on a frictionless floor at e = ½ (5 ms), 10 s;
 *  - S1-100 (bench/contact.ts' scene: no joint, e = 0, no event), 1000 steps after 100.
 * Detections are counted by wrapping updateIndexSet (deterministic); steps/s are wall-clock,
 * the best of 3 runs.
 */
import type { ModelInput } from "../schemas/model";
import { NonsmoothContact } from "../src/engine/contact/nonsmooth-contact";
import { loadModel } from "../src/engine/index";
import { pendulumsOverFloor, s2Chain } from "../test/support/models";
import { spheresModel } from "./contact";

const g = 9.81;

/** The 6-link chain over the floor (file comment). */
export function chainOnFloor(dt: number, restitution = 0): ModelInput {
  const { bodies, joints } = s2Chain(6);
  return {
    name: "chain-on-floor",
    gravity: [0, 0, -g],
    bodies: [
      ...bodies,
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: -0.35 }] },
    ],
    joints,
    contact: { method: "nsc", restitution, friction: 0.5 },
    solver: { integrator: "moreau-jean", dt, theta: 0.5 },
  } as ModelInput;
}

/** A slowly spinning ball bouncing on a frictionless floor (file comment). */
export function spinningBall(): ModelInput {
  return {
    gravity: [0, 0, -g],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
      {
        id: "ball",
        mass: 1,
        inertia: [0.004, 0.004, 0.004],
        position: [0, 0, 0.6],
        angularVelocity: [0.05, 0, 0],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
    ],
    contact: { method: "nsc", restitution: 0.5, friction: 0 },
    solver: { integrator: "moreau-jean", dt: 0.005 },
  } as ModelInput;
}

interface Row {
  [column: string]: string | number;
}

function fmt(x: number, digits = 3): string {
  return x.toPrecision(digits);
}

/** updateIndexSet's calls while `run` runs. */
function countDetections(run: () => void): number {
  const proto = NonsmoothContact.prototype;
  const original = proto.updateIndexSet;
  let calls = 0;
  proto.updateIndexSet = function (this: NonsmoothContact, ...args) {
    calls++;
    return original.apply(this, args);
  };
  try {
    run();
  } finally {
    proto.updateIndexSet = original;
  }
  return calls;
}

function scene(name: string, model: () => ModelInput, steps: number, warmup = 0): Row {
  let detections = 0;
  let best = Number.POSITIVE_INFINITY;
  let impacts = 0;
  for (let rep = 0; rep < 3; rep++) {
    const sim = loadModel(model());
    sim.step(warmup);
    let hits = 0;
    const t0 = performance.now();
    const count = countDetections(() => {
      for (let k = 0; k < steps; k++) {
        sim.step(1);
        hits += sim.lastStepStats.impacts;
      }
    });
    best = Math.min(best, performance.now() - t0);
    detections = count;
    impacts = hits;
  }
  return {
    scene: name,
    steps,
    "detections/step": fmt(detections / steps, 4),
    impacts,
    "steps/s": fmt((1000 * steps) / best),
  };
}

export function runImpactsBench(): Row[] {
  const rows = [
    scene("6-link chain on floor, e = 0, 1/240 s", () => chainOnFloor(1 / 240), 1200),
    scene("6-link chain on floor, e = 0, 1/100 s", () => chainOnFloor(1 / 100), 500),
    scene("6-link chain on floor, e = 1/2, 1/240 s", () => chainOnFloor(1 / 240, 0.5), 1200),
    scene("3 pendulums + ball, e = 1, 5 ms", () => pendulumsOverFloor(), 2000),
    scene("the same + 80 resting spheres (85 shapes)", () => pendulumsOverFloor(80), 2000),
    scene("spinning ball, e = 1/2, 5 ms", spinningBall, 2000),
    scene("S1 spheres N=100", () => spheresModel({ n: 100 }), 1000, 100),
  ];
  console.log("\n## Impact events: detections a step (impact-events.ts)");
  console.table(rows);
  return rows;
}

if (process.argv[1]?.endsWith("impacts.ts")) runImpactsBench();
