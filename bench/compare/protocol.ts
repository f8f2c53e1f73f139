/**
 * One repetition of one scene in one engine, following ../shared/BENCH-SCENES.md:
 * build, warm up (S1, S3: warm-up steps in the same instance; S2: a throw-away instance
 * runs its steps, then a fresh instance is timed from t = 0), then time every single step
 * with process.hrtime.bigint(). Probes run outside the timed region. Never throws: a
 * failure, a divergence or an exhausted time budget is recorded in `status`.
 */
import {
  type BodyStates,
  createBodyStates,
  type EngineAdapter,
  type EngineInstance,
} from "./engines/types";
import {
  chainEnergyScale,
  energy,
  jointDrift,
  probeCloth,
  probeHulls,
  probeSpheres,
  statesFinite,
} from "./probes";
import type { SceneDesc } from "./scene";

export type RunStatus = "ok" | "diverged" | "failed" | "truncated" | "invalid" | "timeout";

export interface Accuracy {
  /**
   * S1: geometric contacts (gap ≤ 1 mm), the engine's own count, mean and lowest centre z,
   * deepest penetration, spheres out of the box. H: the engine's own contact count, mean
   * centre z, deepest penetration into the terrain, hulls gone (off the terrain or through it).
   */
  contacts?: number;
  engineContacts?: number | null;
  meanHeight?: number;
  maxPenetration?: number;
  escaped?: number;
  /** S1, S3: lowest body z (m). */
  lowestZ?: number;
  /** S2: max over steps and joints of the anchor distance (m). */
  jointDrift?: number;
  /** S2: max over steps of |E − E0| / (m g L_total), and its value after the last step. */
  energyDrift?: number;
  energyDriftFinal?: number;
  /** S3: max structural strain after the last step. */
  maxStrain?: number;
  /**
   * Engines that state tolerances (EngineInstance.shortfall): timed steps that ended short
   * of one of them.
   */
  shortSteps?: number;
}

export interface RunResult {
  engine: string;
  version: string;
  scene: string;
  method: string;
  status: RunStatus;
  message?: string;
  /** Timed steps completed and planned. */
  steps: number;
  stepsPlanned: number;
  /** Mean and median single-step wall time (ms), steps/s = 1000 / mean. */
  meanMs: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  stepsPerSecond: number;
  /** Building the timed instance (ms, not timed per step). */
  buildMs: number;
  accuracy: Accuracy;
}

export interface RunOptions {
  /** Override the protocol's counts (the test runs 3 steps). */
  warmup?: number;
  throwAway?: number;
  timed?: number;
  /** Soft budget for the whole run (s): beyond it the timed loop stops ("truncated"). */
  maxSeconds?: number;
  /** Finite-state check every this many steps when the scene does not probe every step. */
  checkEvery?: number;
  /** When given, receives the body states after the last step (for tests). */
  final?: BodyStates;
}

function errorStatus(err: unknown): { status: RunStatus; message: string } {
  const e = err as Error;
  // Moreau's SolverError "… Newton did not converge … even with the step halved" ends its
  // run diverged (its own verdict, schemas/model.ts solver.newtonIterations)
  const diverged =
    e?.name === "DivergenceError" ||
    /diverg|blow|NaN|non-finite|did not converge/i.test(e?.message);
  return {
    status: diverged ? "diverged" : "failed",
    message: `${e?.name ?? "Error"}: ${e?.message ?? String(err)}`,
  };
}

function median(sorted: Float64Array): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  return n % 2 ? sorted[(n - 1) >> 1] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

export function runScene(
  engine: EngineAdapter,
  scene: SceneDesc,
  opts: RunOptions = {},
): RunResult {
  const p = scene.protocol;
  const warmup = opts.warmup ?? p.warmup;
  const throwAway = opts.throwAway ?? p.throwAway;
  const timed = opts.timed ?? p.timed;
  const checkEvery = opts.checkEvery ?? 50;
  const deadline = performance.now() + 1000 * (opts.maxSeconds ?? Number.POSITIVE_INFINITY);
  const states = createBodyStates(scene.bodies.length);
  const times = new Float64Array(timed);
  const accuracy: Accuracy = {};
  let status: RunStatus = "ok";
  let message: string | undefined;
  let done = 0;
  let buildMs = Number.NaN;
  let inst: EngineInstance | null = null;

  const finish = (): RunResult => {
    const t = times.slice(0, done);
    let sum = 0;
    for (let i = 0; i < done; i++) sum += t[i];
    const mean = done > 0 ? sum / done : Number.NaN;
    t.sort();
    return {
      engine: engine.key,
      version: engine.version,
      scene: scene.id,
      method: engine.method(scene),
      status,
      ...(message ? { message } : {}),
      steps: done,
      stepsPlanned: timed,
      meanMs: mean,
      medianMs: median(t),
      minMs: done > 0 ? t[0] : Number.NaN,
      maxMs: done > 0 ? t[done - 1] : Number.NaN,
      stepsPerSecond: 1000 / mean,
      buildMs,
      accuracy,
    };
  };

  try {
    if (throwAway > 0) {
      const warm = engine.create(scene);
      try {
        for (let k = 0; k < throwAway && performance.now() < deadline; k++) warm.step();
      } finally {
        warm.dispose();
      }
    }
    const t0 = performance.now();
    inst = engine.create(scene);
    buildMs = performance.now() - t0;
    for (let k = 0; k < warmup; k++) {
      inst.step();
      if ((k + 1) % checkEvery === 0) {
        inst.read(states);
        if (!statesFinite(states)) {
          status = "diverged";
          message = `state not finite (or beyond 1 km) after warm-up step ${k + 1}`;
          return finish();
        }
      }
    }

    const chain = scene.kind === "chain";
    const scale = chain ? chainEnergyScale(scene) : 1;
    let e0 = 0;
    if (chain) {
      inst.read(states);
      e0 = energy(scene, states);
      accuracy.jointDrift = jointDrift(scene, states);
      accuracy.energyDrift = 0;
    }
    for (let k = 0; k < timed; k++) {
      const a = process.hrtime.bigint();
      inst.step();
      const b = process.hrtime.bigint();
      times[k] = Number(b - a) / 1e6;
      done = k + 1;
      if (inst.shortfall) accuracy.shortSteps = (accuracy.shortSteps ?? 0) + +inst.shortfall();
      if (p.probeEveryStep || done % checkEvery === 0 || done === timed) {
        inst.read(states);
        if (!statesFinite(states)) {
          status = "diverged";
          message = `state not finite (or beyond 1 km) at timed step ${done}`;
          break;
        }
        if (chain) {
          accuracy.jointDrift = Math.max(accuracy.jointDrift ?? 0, jointDrift(scene, states));
          const drift = Math.abs(energy(scene, states) - e0) / scale;
          accuracy.energyDrift = Math.max(accuracy.energyDrift ?? 0, drift);
          accuracy.energyDriftFinal = drift;
        }
      }
      if (performance.now() > deadline && done < timed) {
        status = "truncated";
        message = `time budget of ${opts.maxSeconds} s reached after ${done} of ${timed} timed steps`;
        break;
      }
    }
  } catch (err) {
    ({ status, message } = errorStatus(err));
  }

  if (inst) {
    try {
      inst.read(states);
      if (opts.final) {
        opts.final.pos.set(states.pos);
        opts.final.quat.set(states.quat);
        opts.final.vel.set(states.vel);
        opts.final.omega.set(states.omega);
      }
      if (scene.kind === "spheres") {
        const s = probeSpheres(scene, states);
        Object.assign(accuracy, s, { engineContacts: inst.engineContacts() });
        if (status === "ok" && s.escaped > 0) {
          status = "invalid";
          message = `${s.escaped} spheres left the box (contact not handled?)`;
        }
      } else if (scene.kind === "hulls") {
        const hp = probeHulls(scene, states);
        Object.assign(accuracy, hp, { engineContacts: inst.engineContacts() });
        if (status === "ok" && hp.escaped > 0) {
          status = "invalid";
          message = `${hp.escaped} hulls fell through the terrain or left it`;
        }
      } else if (scene.kind === "cloth") {
        const c = probeCloth(scene, states);
        Object.assign(accuracy, c);
        // A spring stretched to more than twice its rest length is a blow-up that stayed
        // finite (the soft cloth's physical sag is a strain of about 0.5).
        if (status === "ok" && c.maxStrain > 1) {
          status = "invalid";
          message = `a structural spring is at ${(c.maxStrain + 1).toFixed(1)}× its rest length (blow-up)`;
        }
      }
      if (scene.kind === "chain" && status === "ok" && (accuracy.jointDrift ?? 0) > 0.05) {
        status = "invalid";
        message = `joints came apart (drift ${accuracy.jointDrift?.toExponential(2)} m)`;
      }
      if (status === "ok" && !statesFinite(states)) {
        status = "diverged";
        message = "state not finite (or beyond 1 km) after the last step";
      }
    } catch (err) {
      if (status === "ok") ({ status, message } = errorStatus(err));
    }
    try {
      inst.dispose();
    } catch {
      // freeing after a failure is best effort
    }
  }
  return finish();
}
