/**
 * Trajectory writers of `moreau run`: CSV (one row per recorded State) or JSON
 * (`{ name, source, dt, every, frames: [State, ...] }`), written incrementally with
 * back-pressure so that long runs never hold the whole trajectory in memory.
 *
 * A particle (body kind "particle", and every node "<fem id>/<k>" of a fem body) has a
 * position and a velocity only, so its orientation
 * and angular velocity (always the identity and zero) are left out: in JSON its body states
 * carry id, position and velocity; in CSV its columns are `<id>.x <id>.y <id>.z <id>.vx
 * <id>.vy <id>.vz`.
 *
 * CSV columns: time, step, then for each body `<id>.x <id>.y <id>.z` (position, m), for a
 * rigid body `<id>.qw <id>.qx <id>.qy <id>.qz` (orientation), `<id>.vx <id>.vy <id>.vz`
 * (velocity, m/s), for a rigid body `<id>.wx <id>.wy <id>.wz` (angular velocity, rad/s,
 * world frame), then `kinetic potential total` (J). Numbers are written in their shortest
 * round-trip form.
 */
import type { Writable } from "node:stream";
import type { BodyStateOut, StateOut } from "../../schemas/state";

export type Format = "csv" | "json";

export interface TrajectoryWriter {
  write(state: StateOut): Promise<void>;
  /** Completes the document (closing brackets) and waits for the sink to accept it. */
  end(): Promise<void>;
  readonly rows: number;
}

/**
 * Writes a chunk; when the sink's buffer is full, waits until the chunk is flushed. Rejects
 * with the sink's error, also when the sink is already destroyed (a write callback is
 * called in every case, unlike 'drain' and 'error', which a destroyed stream never emits).
 */
export function writeChunk(out: Writable, chunk: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const flushed = (err?: Error | null) => (err ? reject(err) : resolve());
    if (out.write(chunk, flushed)) resolve();
  });
}

/**
 * Writes a diagnostic (standard error). A standard error closed by its reader loses the
 * message, and only that: the trajectory goes to standard output or a file.
 */
export function note(err: Writable, text: string): Promise<void> {
  return writeChunk(err, text).catch(() => undefined);
}

const RIGID = ["x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"];
const PARTICLE = ["x", "y", "z", "vx", "vy", "vz"];

/** Ids of a model's particles: what the writers leave the rotation of out. */
export type Particles = ReadonlySet<string>;

/**
 * Whether body `id` is a particle: one of `particles`, or a fem node "<fem id>/<k>" (a
 * body id has no "/"), which is a particle.
 */
function isParticle(id: string, particles: Particles): boolean {
  return particles.has(id) || id.includes("/");
}

export function csvHeader(bodyIds: readonly string[], particles: Particles): string {
  const cols = ["time", "step"];
  for (const id of bodyIds)
    for (const s of isParticle(id, particles) ? PARTICLE : RIGID) cols.push(csvField(`${id}.${s}`));
  cols.push("kinetic", "potential", "total", "dissipated", "energyError");
  return cols.join(",");
}

function csvField(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRow(state: StateOut, bodyIds: readonly string[], particles: Particles): string {
  const byId = new Map(state.bodies.map((b) => [b.id, b]));
  const v: number[] = [state.time, state.step];
  for (const id of bodyIds) {
    const b = byId.get(id);
    if (!b) throw new Error(`body "${id}" is missing from the state`);
    if (isParticle(id, particles)) v.push(...b.position, ...b.velocity);
    else v.push(...b.position, ...b.orientation, ...b.velocity, ...b.angularVelocity);
  }
  const { kinetic, potential, total, dissipated, error } = state.energy;
  v.push(kinetic, potential, total, dissipated, error);
  return v.map(String).join(",");
}

/** A body of a JSON frame: a rigid body's BodyState, a particle's without its rotation. */
function frameBody(b: BodyStateOut, particles: Particles) {
  return isParticle(b.id, particles) ? { id: b.id, position: b.position, velocity: b.velocity } : b;
}

export function createWriter(
  format: Format,
  out: Writable,
  meta: { name: string; source: string; dt: number; every: number },
  bodies: readonly string[] | null,
  particles: Particles,
): TrajectoryWriter {
  let rows = 0;
  let ids: readonly string[] | null = bodies;
  if (format === "csv")
    return {
      get rows() {
        return rows;
      },
      async write(state) {
        if (rows === 0) {
          ids ??= state.bodies.map((b) => b.id);
          await writeChunk(out, `${csvHeader(ids, particles)}\n`);
        }
        await writeChunk(out, `${csvRow(state, ids!, particles)}\n`);
        rows++;
      },
      async end() {},
    };
  let started = false;
  const start = () =>
    writeChunk(
      out,
      `{"name":${JSON.stringify(meta.name)},"source":${JSON.stringify(meta.source)},"dt":${meta.dt},"every":${meta.every},"frames":[`,
    );
  return {
    get rows() {
      return rows;
    },
    async write(state) {
      if (!started) {
        started = true;
        await start();
      }
      const kept = bodies ? state.bodies.filter((b) => bodies.includes(b.id)) : state.bodies;
      const frame = { ...state, bodies: kept.map((b) => frameBody(b, particles)) };
      await writeChunk(out, `${rows === 0 ? "\n" : ",\n"}${JSON.stringify(frame)}`);
      rows++;
    },
    async end() {
      if (!started) {
        started = true;
        await start();
      }
      await writeChunk(out, "\n]}\n");
    },
  };
}
