/**
 * Sensors (the model's `sensors`): each reads one quantity of the current state into a
 * flat observation vector, in model order, so a controller receives one Float64 vector
 * per frame. Widths: time, joint and actuator sensors 1; body vectors 3 (world frame);
 * orientation 4 ([w, x, y, z]). Units SI (rad and m for joint coordinates, revolute
 * angles unwrapped).
 *
 * bodyAcceleration is (v_t − v_{t−h})/h over the last step (m/s²), 0 before the first
 * step and after a reset; contactForce sums, over the contacts between the two named
 * bodies, the force on the second from the first (normal plus friction, N, world).
 */
import type { SensorSpec } from "../../../schemas/model";
import type { ContactStateOut } from "../../../schemas/state";
import type { JointActuator } from "../actuators/actuator";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import type { BodySystem } from "../model/body-system";

export interface SensorSources {
  system: BodySystem;
  coordinates: ReadonlyMap<string, JointCoordinate>;
  actuators: ReadonlyMap<string, JointActuator>;
  time(): number;
  /** Velocities at the start of the last step (3 per body) and its length h (0: none yet). */
  previousVelocity(): { vel: Float64Array; h: number };
  contacts(): ContactStateOut[];
}

type Reader = (out: number[]) => void;

export class SensorSet {
  readonly width: number;
  private readonly readers: Reader[];

  constructor(specs: readonly SensorSpec[], src: SensorSources) {
    this.readers = specs.map((s) => reader(s, src));
    this.width = specs.reduce((w, s) => w + sensorWidth(s), 0);
  }

  /** The observation vector of the current state. */
  observe(): number[] {
    const out: number[] = [];
    for (const r of this.readers) r(out);
    return out;
  }
}

export function sensorWidth(s: SensorSpec): number {
  switch (s.type) {
    case "time":
    case "jointPosition":
    case "jointVelocity":
    case "actuatorEffort":
      return 1;
    case "bodyOrientation":
      return 4;
    default:
      return 3;
  }
}

function reader(s: SensorSpec, src: SensorSources): Reader {
  const sys = src.system;
  const body = (id: string) => {
    const b = sys.index.get(id);
    if (b === undefined) throw new Error(`sensor "${s.id}" refers to unknown body "${id}"`);
    return b;
  };
  const vector =
    (a: Float64Array, b: number): Reader =>
    (out) => {
      out.push(a[3 * b], a[3 * b + 1], a[3 * b + 2]);
    };
  switch (s.type) {
    case "time":
      return (out) => {
        out.push(src.time());
      };
    case "jointPosition":
    case "jointVelocity": {
      const q = src.coordinates.get(s.joint);
      if (!q) throw new Error(`sensor "${s.id}": joint "${s.joint}" has no coordinate`);
      const position = s.type === "jointPosition";
      return (out) => {
        q.evaluate();
        out.push(position ? q.value : q.rate);
      };
    }
    case "actuatorEffort": {
      const a = src.actuators.get(s.actuator);
      if (!a) throw new Error(`sensor "${s.id}" refers to unknown actuator "${s.actuator}"`);
      return (out) => {
        out.push(a.effort);
      };
    }
    case "bodyPosition":
      return vector(sys.pos, body(s.body));
    case "bodyVelocity":
      return vector(sys.vel, body(s.body));
    case "bodyAngularVelocity":
      return vector(sys.omega, body(s.body));
    case "bodyOrientation": {
      const b = body(s.body);
      return (out) => {
        out.push(sys.quat[4 * b], sys.quat[4 * b + 1], sys.quat[4 * b + 2], sys.quat[4 * b + 3]);
      };
    }
    case "bodyAcceleration": {
      const b = body(s.body);
      return (out) => {
        const { vel, h } = src.previousVelocity();
        for (let k = 0; k < 3; k++) out.push(h > 0 ? (sys.vel[3 * b + k] - vel[3 * b + k]) / h : 0);
      };
    }
    case "contactForce": {
      const [a, b] = s.bodies;
      return (out) => {
        let x = 0;
        let y = 0;
        let z = 0;
        for (const c of src.contacts()) {
          const sign =
            c.bodies[0] === a && c.bodies[1] === b
              ? 1
              : c.bodies[0] === b && c.bodies[1] === a
                ? -1
                : 0;
          if (sign === 0) continue;
          x += sign * (c.normalForce * c.normal[0] + c.tangentForce[0]);
          y += sign * (c.normalForce * c.normal[1] + c.tangentForce[1]);
          z += sign * (c.normalForce * c.normal[2] + c.tangentForce[2]);
        }
        out.push(x, y, z);
      };
    }
  }
}
