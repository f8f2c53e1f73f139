/**
 * A simulation: the bodies, their force effectors and the integrator, advanced by one
 * clear step pipeline. Constructed by loadModel (src/model/load.ts) from a validated
 * model; the service and embedding programs use it through src/index.ts.
 */
import type { ContactSpec, ModelSpec, SolverSpec } from "../../schemas/model";
import type { AssemblyOptionsIn, AssemblyResultOut, StateOut } from "../../schemas/state";
import { AssemblyOptions } from "../../schemas/state";
import { assemble } from "../analysis/assembly";
import type { ConstraintSet } from "../constraints/constraint-set";
import type { ContactModel } from "../contact/contact-model";
import type { ForceEffector } from "../forces/effector";
import { AccelerationStepper } from "../integrators/acceleration-step";
import type { Integrator, StepStats } from "../integrators/integrator";
import { NewmarkIntegrator } from "../integrators/newmark";
import { ThetaScheme } from "../integrators/theta-scheme";
import { type BodySystem, kineticEnergy, updateDerived } from "../model/body-system";

/** Thrown by step() when the state stops being finite or blows up; the state is the last good one. */
export class DivergenceError extends Error {
  constructor(
    message: string,
    readonly time: number,
    readonly step: number,
  ) {
    super(message);
    this.name = "DivergenceError";
  }
}

/**
 * Thrown by step() when a solver fails for a reason other than divergence (an internal
 * error); the state is the last good one. The service marks such a session `error`.
 */
export class SolverError extends Error {
  constructor(
    message: string,
    readonly time: number,
    readonly step: number,
  ) {
    super(message);
    this.name = "SolverError";
  }
}

/** Positions and velocities beyond these are treated as a blow-up (m, m/s). */
const BLOW_UP_POSITION = 1e8;
const BLOW_UP_VELOCITY = 1e8;

export interface SimulationParts {
  model: ModelSpec;
  system: BodySystem;
  effectors: ForceEffector[];
  constraints: ConstraintSet;
  /** Contacts (model.contact), or undefined when bodies do not collide. */
  contact?: ContactModel;
  setGravity(g: readonly [number, number, number]): void;
}

export interface ScenePart {
  bodies: {
    id: string;
    kind: "rigid" | "particle";
    fixed: boolean;
    shapes: ModelSpec["bodies"][number]["shapes"];
  }[];
  joints: {
    id: string;
    type: string;
    a: { body: string; point: number[] };
    b: { body: string; point: number[] };
  }[];
}

export interface SimulationPatch {
  solver?: Partial<SolverSpec>;
  gravity?: [number, number, number];
  contact?: Partial<ContactSpec>;
}

export class Simulation {
  readonly model: ModelSpec;
  readonly system: BodySystem;
  private solverSpec: SolverSpec;
  private readonly effectors: ForceEffector[];
  private readonly constraints: ConstraintSet;
  private readonly contact: ContactModel | undefined;
  private readonly stepper: AccelerationStepper;
  private integrator: Integrator;
  private t = 0;
  private steps = 0;
  private lastStats: StepStats = {
    newtonIterations: 0,
    linearIterations: 0,
    contactIterations: 0,
    contactResidual: 0,
  };
  private readonly initial: {
    pos: Float64Array;
    quat: Float64Array;
    vel: Float64Array;
    omega: Float64Array;
  };
  private readonly good: {
    pos: Float64Array;
    quat: Float64Array;
    vel: Float64Array;
    omega: Float64Array;
  };
  private readonly setGravityFn: (g: readonly [number, number, number]) => void;
  private gravity: [number, number, number];

  constructor(parts: SimulationParts) {
    this.model = parts.model;
    this.system = parts.system;
    this.effectors = parts.effectors;
    this.constraints = parts.constraints;
    this.contact = parts.contact;
    this.setGravityFn = parts.setGravity;
    this.gravity = [...parts.model.gravity];
    this.solverSpec = { ...parts.model.solver };
    this.stepper = new AccelerationStepper(
      this.system,
      this.effectors,
      this.solverSpec.linearSolver,
      this.constraints,
    );
    this.integrator = this.createIntegrator();
    this.initial = this.copyState();
    this.good = this.copyState();
  }

  get time(): number {
    return this.t;
  }

  get stepCount(): number {
    return this.steps;
  }

  /** Accumulated wall time (ms) in matrix assembly and linear solves since creation. */
  get timing(): Readonly<{ assembly: number; solve: number }> {
    return this.stepper.timing;
  }

  get solver(): Readonly<SolverSpec> {
    return this.solverSpec;
  }

  /**
   * Advances n steps of solver.dt. Throws DivergenceError, with the state restored to the
   * last good step, when it becomes non-finite or blows up.
   */
  step(n = 1): void {
    const h = this.solverSpec.dt;
    for (let k = 0; k < n; k++) {
      this.saveGood();
      let stats: StepStats;
      try {
        stats = this.integrator.step(this.t, h);
        this.stepper.projectOnConstraints(this.t + h);
      } catch (err) {
        this.restoreGood();
        throw new SolverError(
          `step ${this.steps + 1} failed: ${(err as Error).message}`,
          this.t,
          this.steps,
        );
      }      const bad = this.findBlowUp();
      if (bad !== null) {
        this.restoreGood();
        throw new DivergenceError(
          `diverged at step ${this.steps + 1} (t = ${(this.t + h).toPrecision(6)} s): ${bad}`,
          this.t,
          this.steps,
        );
      }
      this.lastStats = stats;
      this.steps++;
      this.t += h;
    }
  }

  /** Back to t = 0 with the model's initial state. */
  reset(): void {
    this.restore(this.initial);
    this.t = 0;
    this.steps = 0;
    this.lastStats = { newtonIterations: 0, linearIterations: 0, contactIterations: 0, contactResidual: 0 };
    this.integrator.reset();
  }

  update(patch: SimulationPatch): void {
    if (patch.gravity) {
      this.gravity = [...patch.gravity];
      this.setGravityFn(this.gravity);
    }
    if (patch.contact) this.contact?.update(patch.contact);
    if (patch.solver) {
      this.solverSpec = { ...this.solverSpec, ...patch.solver };
      this.stepper.setLinearSolver(this.solverSpec.linearSolver);
      this.integrator = this.createIntegrator();
    }
    this.integrator.reset();
  }

  state(): StateOut {
    const s = this.system;
    const bodies = s.ids.map((id, b) => ({
      id,
      position: vec3(s.pos, 3 * b),
      orientation: [s.quat[4 * b], s.quat[4 * b + 1], s.quat[4 * b + 2], s.quat[4 * b + 3]] as [
        number,
        number,
        number,
        number,
      ],
      velocity: vec3(s.vel, 3 * b),
      angularVelocity: vec3(s.omega, 3 * b),
    }));
    const kinetic = kineticEnergy(s);
    const potential = this.effectors.reduce((e, f) => e + f.potentialEnergy(), 0);
    return {
      time: this.t,
      step: this.steps,
      bodies,
      contacts: this.contact?.states() ?? [],
      joints: this.constraints.jointStates(this.stepper.lambda),
      energy: { kinetic, potential, total: kinetic + potential },
      solver: { ...this.lastStats },
    };
  }

  /**
   * Assembly analysis at the current time (Chrono ChAssemblyAnalysis semantics; see
   * src/analysis/assembly.ts). The bodies are moved to the assembled state only when
   * `apply` is true; otherwise the state is restored afterwards.
   */
  assemble(options?: AssemblyOptionsIn, apply = false): AssemblyResultOut {
    const spec = AssemblyOptions.parse(options ?? {});
    const before = this.copyState();
    const result = assemble(
      this.system,
      this.constraints,
      (t, out) => this.stepper.computeForces(t, out),
      this.t,
      spec,
    );
    if (apply) this.integrator.reset();
    else this.restore(before);
    return result;
  }

  scene(): ScenePart {
    return {
      bodies: this.model.bodies.map((b) => ({
        id: b.id,
        kind: b.kind,
        fixed: b.fixed,
        shapes: b.shapes,
      })),
      joints: this.model.joints.map((j) => ({ id: j.id, type: j.type, a: j.a, b: j.b })),
    };
  }

  private createIntegrator(): Integrator {
    const p = this.solverSpec;
    const newton = { maxIterations: p.newtonIterations, tolerance: p.newtonTolerance };
    const withContact = this.contact?.createIntegrator(p, this.stepper);
    if (withContact) return withContact;
    switch (p.integrator) {
      case "newmark":
        return new NewmarkIntegrator(this.stepper, {
          beta: p.beta,
          gamma: p.gamma,
          rayleighMass: p.rayleighMass,
          rayleighStiffness: p.rayleighStiffness,
          velocityDamping: p.velocityDamping,
          newton,
        });
      case "backward-euler":
        return new ThetaScheme("backward-euler", this.stepper, {
          theta: 1,
          forceWeight: 1,
          newton,
        });
      case "symplectic-euler":
        return new ThetaScheme("symplectic-euler", this.stepper, {
          theta: 1,
          forceWeight: 0,
          newton,
        });
      case "moreau-jean":
        return new ThetaScheme("moreau-jean", this.stepper, {
          theta: p.theta,
          forceWeight: p.theta,
          newton,
        });
    }
  }

  private findBlowUp(): string | null {
    const s = this.system;
    for (let b = 0; b < s.numBodies; b++) {
      for (let k = 0; k < 3; k++) {
        const x = s.pos[3 * b + k];
        const v = s.vel[3 * b + k];
        const w = s.omega[3 * b + k];
        if (!Number.isFinite(x) || !Number.isFinite(v) || !Number.isFinite(w))
          return `body "${s.ids[b]}" has a non-finite state`;
        if (
          Math.abs(x) > BLOW_UP_POSITION ||
          Math.abs(v) > BLOW_UP_VELOCITY ||
          Math.abs(w) > BLOW_UP_VELOCITY
        )
          return `body "${s.ids[b]}" blew up (|x| or |v| beyond 1e8)`;
      }
      if (!Number.isFinite(s.quat[4 * b])) return `body "${s.ids[b]}" has a non-finite orientation`;
    }
    return null;
  }

  private copyState() {
    const s = this.system;
    return {
      pos: new Float64Array(s.pos),
      quat: new Float64Array(s.quat),
      vel: new Float64Array(s.vel),
      omega: new Float64Array(s.omega),
    };
  }

  private saveGood(): void {
    const s = this.system;
    this.good.pos.set(s.pos);
    this.good.quat.set(s.quat);
    this.good.vel.set(s.vel);
    this.good.omega.set(s.omega);
  }

  private restoreGood(): void {
    this.restore(this.good);
    this.integrator.reset();
  }

  private restore(from: {
    pos: Float64Array;
    quat: Float64Array;
    vel: Float64Array;
    omega: Float64Array;
  }) {
    const s = this.system;
    s.pos.set(from.pos);
    s.quat.set(from.quat);
    s.vel.set(from.vel);
    s.omega.set(from.omega);
    updateDerived(s);
  }
}

function vec3(a: Float64Array, i: number): [number, number, number] {
  return [a[i], a[i + 1], a[i + 2]];
}
