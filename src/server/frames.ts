/**
 * Stream frame encoding, shared by the workers (which encode every state frame once per
 * subscribed field set and format) and the event loop (which only patches the `dropped`
 * count of a frame for a subscriber that missed some).
 *
 * The `contactPeak` field is not in the State: it covers the steps since the previous frame
 * of the subscription class, which the worker follows with one ContactWindow per class.
 *
 * A state frame is `{ type: "state", time, step, <fields>, keptStep, dropped }` (keptStep: the
 * step of the checkpoint the store had confirmed when the worker encoded it, null: none) with `dropped` the LAST
 * key and encoded as 0, so the event loop can rewrite it without decoding: in JSON the
 * encoding ends with the bytes `0}`, in msgpack with the positive fixint byte 0x00; the
 * patch replaces those bytes with the count (JSON digits + `}`, msgpack uint).
 */
import { Packr } from "msgpackr";
import type { ContactPeakOut, SceneOut, StreamField } from "../../schemas/api";
import type { StateOut } from "../../schemas/state";

/** Standard msgpack maps (no msgpackr record extension), float64 numbers: any decoder reads it. */
export const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const utf8 = new TextEncoder();

export type FrameFormat = "json" | "msgpack";

/** contactPeak of a frame that covers no step (a first frame, a frame right after a reset). */
const NO_CONTACT_STEPS: ContactPeakOut = { steps: 0, maxNormalForce: 0, normalImpulse: 0 };

/**
 * The contact figures of one subscription class (fields with contactPeak, `every`) over the
 * steps since its previous frame: updated after every step without allocating, read into
 * the class's next frame and cleared once that frame is posted.
 */
export class ContactWindow {
  steps = 0;
  /** N: the largest total normal contact force of a step */
  maxNormalForce = 0;
  /** N·s: Σ of (total normal contact force × step length) */
  normalImpulse = 0;

  constructor(
    readonly key: string,
    readonly every: number,
  ) {}

  /** Counts a step of h seconds whose contacts pushed with `force` N in all. */
  add(force: number, h: number): void {
    this.steps++;
    if (force > this.maxNormalForce) this.maxNormalForce = force;
    this.normalImpulse += force * h;
  }

  clear(): void {
    this.steps = 0;
    this.maxNormalForce = 0;
    this.normalImpulse = 0;
  }

  figures(): ContactPeakOut {
    return {
      steps: this.steps,
      maxNormalForce: this.maxNormalForce,
      normalImpulse: this.normalImpulse,
    };
  }
}

/** What a state frame carries beside the State: the session's keptStep, its class's contact figures. */
export interface FrameExtras {
  /** the step of the checkpoint the store holds (null: none, or no store) */
  keptStep: number | null;
  /** the contactPeak field's figures (left out: a window that covers no step) */
  peak?: ContactPeakOut;
}

/**
 * The state frame object for `fields` (time and step are always present); `contactPeak`
 * (when subscribed) is `extras.peak`, else covers no step; `fem` and `femStrain` as
 * femField; `keptStep` always.
 */
export function stateFrame(
  state: StateOut,
  fields: readonly StreamField[],
  extras: FrameExtras,
  format: FrameFormat = "json",
): Record<string, unknown> {
  const f: Record<string, unknown> = { type: "state", time: state.time, step: state.step };
  for (const k of fields)
    f[k] =
      k === "contactPeak"
        ? (extras.peak ?? NO_CONTACT_STEPS)
        : k === "fem" || k === "femStrain"
          ? femField(state, k, format)
          : state[k];
  f.keptStep = extras.keptStep;
  f.dropped = 0;
  return f;
}

/**
 * The `fem` field (each fem body's node positions) or `femStrain` (its nodal strains) of
 * the State's `fem` ([] without fem bodies). In msgpack each array is one bin (standard
 * msgpack: any decoder gets the bytes) of little-endian float64 positions or float32
 * strains (leBytes), 8 and 4 bytes a value; in JSON number arrays.
 */
function femField(
  state: StateOut,
  k: "fem" | "femStrain",
  format: FrameFormat,
): Record<string, unknown>[] {
  const fem = state.fem ?? [];
  const bin = format === "msgpack";
  return k === "fem"
    ? fem.map(({ id, positions }) => ({ id, positions: bin ? leBytes(positions, 8) : positions }))
    : fem.map(({ id, strain }) => ({ id, strain: bin ? leBytes(strain, 4) : strain }));
}

/** The values as little-endian float64 (width 8) or float32 (width 4), whatever the host. */
function leBytes(values: readonly number[], width: 4 | 8): Uint8Array {
  const out = new Uint8Array(width * values.length);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++)
    if (width === 8) view.setFloat64(8 * i, values[i], true);
    else view.setFloat32(4 * i, values[i], true);
  return out;
}

/** Encodes a value; the result owns its ArrayBuffer exactly (safe to transfer). */
export function encode(value: unknown, format: FrameFormat): Uint8Array {
  if (format === "json") return utf8.encode(JSON.stringify(value));
  // msgpackr returns a view into its reusable buffer: copy it out
  return new Uint8Array(packr.pack(value));
}

/**
 * The static part of a session's scene frame (bodies, joints, fem: a 10 000-particle
 * cloth's is 0.6 MB of JSON, 0.4 MB of msgpack), encoded once, by the session's worker,
 * in both formats. Each object's encoding, `{"bodies":…,"joints":…,"fem":…}` and the
 * msgpack fixmap of the same three entries.
 */
export interface EncodedScene {
  json: Uint8Array;
  msgpack: Uint8Array;
}

/** The scene's static part encoded in both formats (in the worker: see EncodedScene). */
export function encodeScene(scene: SceneOut): EncodedScene {
  const part = { bodies: scene.bodies, joints: scene.joints, fem: scene.fem ?? [] };
  return { json: encode(part, "json"), msgpack: encode(part, "msgpack") };
}

/**
 * The encoding of the object `{...head, bodies, joints, fem}` (keys in that order) from
 * `head`'s fields and the scene's encoded static part, without decoding or encoding that
 * part again: the event loop's cost is a copy, whatever the scene's size (encoding a
 * 10 000-particle cloth's scene cost it 7 ms in JSON, 49 ms in msgpack, for every stream
 * that opened). JSON: `{head}` and `{part}` joined as `{head,part}`. msgpack: two maps
 * (a header — fixmap 0x80|n, map16 0xde n:u16, map32 0xdf n:u32, big-endian — then n
 * key/value pairs; msgpackr writes map16) joined under one map16 header of the summed
 * count. `head` has at least one field.
 */
export function sceneFrameBytes(
  head: Record<string, unknown>,
  scene: EncodedScene,
  format: FrameFormat,
): Uint8Array {
  const part = scene[format];
  const h = encode(head, format);
  if (format === "json") {
    const out = new Uint8Array(h.length + part.length - 1);
    out.set(h);
    out[h.length - 1] = 0x2c; // the head's closing brace becomes a comma
    out.set(part.subarray(1), h.length);
    return out;
  }
  const a = mapHeader(h);
  const b = mapHeader(part);
  const entries = a.entries + b.entries;
  if (entries > 0xffff) throw new Error("scene frame: more than 65 535 fields");
  const out = new Uint8Array(3 + h.length - a.size + part.length - b.size);
  out[0] = 0xde;
  out[1] = entries >> 8;
  out[2] = entries & 0xff;
  out.set(h.subarray(a.size), 3);
  out.set(part.subarray(b.size), 3 + h.length - a.size);
  return out;
}

/** The entry count and header size of the msgpack map at the start of `bytes`. */
function mapHeader(bytes: Uint8Array): { entries: number; size: number } {
  const t = bytes[0];
  if ((t & 0xf0) === 0x80) return { entries: t & 0x0f, size: 1 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (t === 0xde) return { entries: view.getUint16(1), size: 3 };
  if (t === 0xdf) return { entries: view.getUint32(1), size: 5 };
  throw new Error(`scene frame: not a msgpack map (type byte 0x${t.toString(16)})`);
}

export function encodeStateFrame(
  state: StateOut,
  fields: readonly StreamField[],
  format: FrameFormat,
  extras: FrameExtras,
): Uint8Array {
  return encode(stateFrame(state, fields, extras, format), format);
}

/**
 * A REST State answer (the worker's JSON of the State) with `keptStep` added as its last
 * key: `…}` becomes `…,"keptStep":<n | null>}`, without parsing it (a State is a JSON
 * object, so its encoding ends with `}`). The event loop stamps it when it answers, after
 * any checkpoint the answer waited for.
 */
export function withKeptStep(state: Uint8Array, keptStep: number | null): Uint8Array {
  const tail = utf8.encode(`,"keptStep":${keptStep}}`);
  const out = new Uint8Array(state.length - 1 + tail.length);
  out.set(state.subarray(0, state.length - 1), 0);
  out.set(tail, state.length - 1);
  return out;
}

/** msgpack encoding of a non-negative integer. */
export function msgpackUint(n: number): Uint8Array {
  if (n <= 0x7f) return Uint8Array.of(n);
  if (n <= 0xff) return Uint8Array.of(0xcc, n);
  if (n <= 0xffff) return Uint8Array.of(0xcd, n >>> 8, n & 0xff);
  if (n <= 0xffffffff)
    return Uint8Array.of(0xce, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  const out = new Uint8Array(9);
  out[0] = 0xcb;
  new DataView(out.buffer).setFloat64(1, n);
  return out;
}

/**
 * A copy of an encoded state frame with `dropped` set to n (n > 0); the shared original is
 * never modified because it may still sit in other subscribers' socket buffers.
 */
export function withDropped(frame: Uint8Array, format: FrameFormat, n: number): Uint8Array {
  if (n === 0) return frame;
  if (format === "json") {
    // ...,"dropped":0}  →  ...,"dropped":<n>}
    const tail = utf8.encode(`${n}}`);
    const out = new Uint8Array(frame.length - 2 + tail.length);
    out.set(frame.subarray(0, frame.length - 2), 0);
    out.set(tail, frame.length - 2);
    return out;
  }
  const tail = msgpackUint(n);
  const out = new Uint8Array(frame.length - 1 + tail.length);
  out.set(frame.subarray(0, frame.length - 1), 0);
  out.set(tail, frame.length - 1);
  return out;
}

/**
 * Frames a subscriber with period `every` missed between the last frame it received (at
 * step `last`) and the one at step `now`: the multiples of `every` strictly between them.
 * A step going backwards (reset) or a first frame counts none.
 */
export function missedBetween(last: number | null, now: number, every: number): number {
  if (last === null || now <= last) return 0;
  return Math.max(0, Math.floor((now - 1) / every) - Math.floor(last / every));
}
