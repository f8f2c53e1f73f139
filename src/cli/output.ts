/**
 * Trajectory writers of `moreau run`: CSV (one row per recorded State) or JSON
 * (`{ name, source, dt, every, frames: [State, ...] }`), written incrementally with
 * back-pressure so that long runs never hold the whole trajectory in memory.
 *
 * CSV columns: time, step, then for each body `<id>.x <id>.y <id>.z` (position, m),
 * `<id>.qw <id>.qx <id>.qy <id>.qz` (orientation), `<id>.vx <id>.vy <id>.vz` (velocity,
 * m/s), `<id>.wx <id>.wy <id>.wz` (angular velocity, rad/s, world frame), then
 * `kinetic potential total` (J). Numbers are written in their shortest round-trip form.
 */
import type { Writable } from "node:stream";
import type { StateOut } from "../../schemas/state";

export type Format = "csv" | "json";

export interface TrajectoryWriter {
  write(state: StateOut): Promise<void>;
  /** Completes the document (closing brackets) and waits for the sink to accept it. */
  end(): Promise<void>;
  readonly rows: number;
}

/** Writes a chunk, waiting for 'drain' when the sink's buffer is full. */
export function writeChunk(out: Writable, chunk: string): Promise<void> {
  if (out.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      out.off("error", onError);
      resolve();
    };
    const onError = (err: Error) => {
      out.off("drain", onDrain);
      reject(err);
    };
    out.once("drain", onDrain);
    out.once("error", onError);
  });
}

const SUFFIXES = ["x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"];

export function csvHeader(bodyIds: readonly string[]): string {
  const cols = ["time", "step"];
  for (const id of bodyIds) for (const s of SUFFIXES) cols.push(csvField(`${id}.${s}`));
  cols.push("kinetic", "potential", "total");
  return cols.join(",");
}

function csvField(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRow(state: StateOut, bodyIds: readonly string[]): string {
  const byId = new Map(state.bodies.map((b) => [b.id, b]));
  const v: number[] = [state.time, state.step];
  for (const id of bodyIds) {
    const b = byId.get(id);
    if (!b) throw new Error(`body "${id}" is missing from the state`);
    v.push(...b.position, ...b.orientation, ...b.velocity, ...b.angularVelocity);
  }
  v.push(state.energy.kinetic, state.energy.potential, state.energy.total);
  return v.map(String).join(",");
}

export function createWriter(
  format: Format,
  out: Writable,
  meta: { name: string; source: string; dt: number; every: number },
  bodies: readonly string[] | null,
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
          await writeChunk(out, `${csvHeader(ids)}\n`);
        }
        await writeChunk(out, `${csvRow(state, ids!)}\n`);
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
      const s = bodies
        ? { ...state, bodies: state.bodies.filter((b) => bodies.includes(b.id)) }
        : state;
      await writeChunk(out, `${rows === 0 ? "\n" : ",\n"}${JSON.stringify(s)}`);
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
