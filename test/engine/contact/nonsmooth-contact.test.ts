/**
 * The nonsmooth contact step's wiring, checked against independent figures:
 * - Lemke and PGS give the same step on random frictionless sphere piles, and Lemke's
 *   impulses satisfy complementarity with the end velocities (from the bodies' states,
 *   u_n = n·(v_b − v_a) for spheres) to 1e-12;
 * - the block-sparse fast path and the dense path through the stepper's solveConstrained
 *   (forced here by a spring of zero stiffness, which couples two bodies' blocks without a
 *   force) give the same trajectories of a frictional pile;
 * - joints: a pendulum whose bob strikes the floor with the arm horizontal (contact normal
 *   ⟂ arm, one dof) rebounds with ω⁺ = −e ω⁻ (to O(hωφ)), and the joint's reported reaction
 *   closes the impulse balance m(v⁺ − v⁻) = m g h + P + F_joint h;
 * - a contact redundant with a joint (under a link's hinged end, lying on the floor):
 *   chains of hinged links dropped onto the floor carry the statics' loads m g/2 at their
 *   ends, every force within their weight, for 30 s;
 * - per-pair restitution and friction override the defaults; PATCH changes them in a
 *   running session; bodies joined by a joint do not collide unless collideJointed;
 * - Lemke refuses friction, Newmark refuses nonsmooth contact, reset forgets contacts;
 * - a snapshot carries the warm-start impulses: the continuation is bit-identical, and
 *   differs (within the solver tolerance) when the memory is dropped;
 * - Moreau–Jean's continued solve (solve with continued > 0, a stand-in solver): the
 *   polishing sweeps' iterate is kept when it still meets the tolerance, else the one that
 *   met it is returned with its residual.
 */
import { describe, expect, it } from "vitest";
import type { NonsmoothContact } from "../../../src/engine/contact/nonsmooth-contact";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import type {
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
} from "../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../support/random";
import { ROUND_OFF_CONTACT } from "./helpers";

const g = 9.81;
const floor = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane" as const, normal: [0, 0, 1] as [number, number, number], offset: 0 }],
};

/** A few spheres touching the floor and each other (random radii, masses, small overlaps). */
function pile(seed: number, solver: string, friction = 0, extra: Record<string, unknown> = {}) {
  const r = mulberry32(seed);
  const bodies: Record<string, unknown>[] = [];
  const n = 3 + Math.floor(r() * 4);
  let x = 0;
  for (let i = 0; i < n; i++) {
    const R = 0.05 + 0.05 * r();
    x += i === 0 ? 0 : R + (bodies[i - 1] as { radius: number }).radius - 1e-4 * r();
    const z = R - 1e-4 * r();
    bodies.push({
      id: `s${i}`,
      radius: R,
      mass: 0.5 + r(),
      position: [x, 0.01 * (r() - 0.5), z],
      velocity: [r() - 0.5, 0, -r()],
      shapes: [{ type: "sphere", radius: R }],
    });
  }
  for (const b of bodies) delete b.radius;
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [...bodies, floor],
    contact: { method: "nsc", friction },
    solver: {
      integrator: "moreau-jean",
      dt: 0.005,
      contactSolver: solver,
      tolerance: 1e-14,
      maxIterations: 5000,
    },
    ...extra,
  });
}

describe("Lemke and PGS on random sphere piles (frictionless LCP)", () => {
  for (let seed = 1; seed <= 8; seed++)
    it(`seed ${seed}: same velocities, Lemke complementary to 1e-12`, () => {
      const a = pile(seed, "lemke");
      const b = pile(seed, "pgs");
      a.step(1);
      b.step(1);
      const sa = a.state();
      const sb = b.state();
      expect(sa.contacts.length).toBeGreaterThan(2);
      sa.bodies.forEach((body, i) => {
        for (let k = 0; k < 3; k++)
          expect(Math.abs(body.velocity[k] - sb.bodies[i].velocity[k])).toBeLessThan(1e-9);
      });
      const vel = new Map(sa.bodies.map((x) => [x.id, x.velocity]));
      for (const c of sa.contacts) {
        const va = vel.get(c.bodies[0]) ?? [0, 0, 0];
        const vb = vel.get(c.bodies[1]) ?? [0, 0, 0];
        const un = c.normal.reduce((s, nk, k) => s + nk * (vb[k] - va[k]), 0);
        const Pn = c.normalForce * 0.005;
        expect(Pn).toBeGreaterThanOrEqual(0);
        expect(un).toBeGreaterThan(-1e-12);
        expect(Math.abs(Pn * un)).toBeLessThan(1e-12);
      }
    });
});

describe("fast block-sparse path and dense solveConstrained path agree", () => {
  it("a frictional pile with and without a zero-stiffness coupling spring", () => {
    const spring = {
      forces: [{ id: "k0", type: "spring", a: { body: "s0" }, b: { body: "s2" }, stiffness: 0 }],
    };
    const fast = pile(11, "pgs", 0.4);
    const dense = pile(11, "pgs", 0.4, spring);
    for (let k = 0; k < 40; k++) {
      fast.step(1);
      dense.step(1);
    }
    const a = fast.state();
    const b = dense.state();
    expect(a.contacts.length).toBeGreaterThan(2);
    a.bodies.forEach((body, i) => {
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(body.position[k] - b.bodies[i].position[k])).toBeLessThan(1e-10);
        expect(Math.abs(body.velocity[k] - b.bodies[i].velocity[k])).toBeLessThan(1e-8);
      }
    });
  });
});

/** The pendulum bob of the tests with joints: arm length L, bob radius r and mass m. */
const BOB = { L: 0.5, r: 0.05, m: 2 };

/**
 * A bob (a sphere of radius r, mass m) on an arm of length L pinned at (0, 0, r) about y,
 * the bob centred on the arm; it starts at rest a0 above horizontal (20°; below it, a0 < 0,
 * the bob starts L sin|a0| into the floor) and the floor z = 0 is touched when the arm is
 * horizontal. NSC contact with `restitution`.
 */
function bobOnFloor(
  restitution: number,
  solver: Record<string, unknown>,
  a0 = (20 * Math.PI) / 180,
) {
  const { L, r, m } = BOB;
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [
      {
        id: "bob",
        mass: m,
        position: [L * Math.cos(a0), 0, r + L * Math.sin(a0)],
        inertia: [0.002, 0.002, 0.002],
        shapes: [{ type: "sphere", radius: r }],
      },
      floor,
    ],
    joints: [
      {
        id: "pivot",
        type: "revolute",
        a: { body: "ground", point: [0, 0, r] },
        b: { body: "bob", point: [-L * Math.cos(a0), 0, -L * Math.sin(a0)] },
        axis: [0, 1, 0],
      },
    ],
    contact: { method: "nsc", restitution },
    solver,
  });
}

describe("contact with joints (Delassus through the constrained solve)", () => {
  it("a pendulum bob striking the floor with the arm horizontal at e = 0 stops: ω⁺ ≈ −e ω⁻ = 0", () => {
    const { m } = BOB;
    // (a jointed body's impact, at e = 0 too, is met at its instant, integrators/impact-
    // events.ts: Newton's law with the joints at the impact, its impulse the step's)
    const e = 0;
    const h = 0.002;
    // the velocity step alone (no position projection), whose impulses balance exactly
    const sim = bobOnFloor(e, {
      integrator: "moreau-jean",
      dt: h,
      tolerance: 1e-14,
      projectOnConstraints: false,
    });
    let hit = false;
    for (let k = 0; k < 2000 && !hit; k++) {
      const before = sim.state().bodies[0];
      sim.step(1);
      const st = sim.state();
      if (st.contacts.length === 0 || st.contacts[0].normalForce <= 0) continue;
      hit = true;
      const after = st.bodies[0];
      // One dof: u_n = ω L cos φ (φ the arm's angle below horizontal). The contact row is
      // taken at t, the joint's velocity constraint at t + h, so the ratio is −e up to
      // cos φ_t / cos φ_{t+h} − 1 and the end-of-step joint linearization, O(h ω φ) ≈ 1e-4.
      expect(Math.abs(after.angularVelocity[1] / before.angularVelocity[1] + e)).toBeLessThan(3e-4);
      // Impulse balance on the bob: m Δv = m g h + P_contact(on bob) + F_joint h (to the
      // joints' post-step velocity projection, a correction of O(h² ω²) not in F_joint).
      const c = st.contacts[0];
      const onBob = c.bodies[1] === "bob" ? 1 : -1;
      const F = st.joints[0].force;
      for (let k2 = 0; k2 < 3; k2++) {
        const lhs = m * (after.velocity[k2] - before.velocity[k2]);
        const rhs = (k2 === 2 ? -m * g * h : 0) + onBob * c.impulse[k2] + F[k2] * h;
        expect(Math.abs(lhs - rhs)).toBeLessThan(1e-6);
      }
    }
    expect(hit).toBe(true);
  });
});

/**
 * Boxes of 1 kg, 0.4 × 0.05 × 0.05 m, in a chain along x: link 1 hinged (axis y) to the
 * ground at the centre of its end face, at its half height, and each next link hinged
 * to the previous one's far end; all raised by `lift` (rad) about the ground hinge and
 * dropped onto the floor. Lying flat, the contact under the hinged end and the hinge's
 * vertical row are dependent.
 */
function hingedLinks(links: number, lift: number, friction: number, contactSolver: string) {
  const L = 0.4;
  const hz = 0.025;
  const c = Math.cos(lift);
  const sn = Math.sin(lift);
  const q = [Math.cos(-lift / 2), 0, Math.sin(-lift / 2), 0];
  const box = { type: "box", halfExtents: [L / 2, 0.025, 0.025] };
  const bodies: unknown[] = [floor];
  const joints: unknown[] = [];
  for (let i = 0; i < links; i++) {
    const id = `l${i + 1}`;
    const s = (i + 0.5) * L;
    bodies.push({ id, mass: 1, position: [s * c, 0, hz + s * sn], orientation: q, shapes: [box] });
    joints.push({
      id: `j${i + 1}`,
      type: "revolute",
      a: i === 0 ? { body: "ground", point: [0, 0, hz] } : { body: `l${i}`, point: [L / 2, 0, 0] },
      b: { body: id, point: [-L / 2, 0, 0] },
      axis: [0, 1, 0],
    });
  }
  return loadModel({
    gravity: [0, 0, -g],
    bodies,
    joints,
    contact: { method: "nsc", friction },
    solver: { dt: 0.005, contactSolver },
  } as never);
}

describe("a contact redundant with a joint (the contact under a hinged end)", () => {
  // Statics of the chain lying flat (m = 1 kg): each link is a beam on its two ends, so
  // the hinged end (the ground hinge with the contact under it: their split is not
  // determined) carries m g/2, the last link's free end m g/2, and the reactions of the
  // joints between links and the contacts under them the rest; friction's moments about
  // the hinge axes (the floor 0.025 m below them) shift these by at most μ N·0.025/0.4.
  // Every step of a 30 s run after the drop (1 s): each link's vertical balance, these
  // loads, every force within the arm's weight, and Newton converged.
  // (balance: the vertical forces' sum, exact at rest where the contact solve converges; apgd
  // stops at the default tolerance 10⁻³ g h on the velocities: m 10⁻³ g ≈ 0.01 N of
  // unbalanced force)
  const cases = [
    { links: 2, lift: 0.5, friction: 0.5, solver: "nncg", shift: 0.5, balance: 1e-9 },
    { links: 2, lift: 0.5, friction: 0, solver: "nncg", shift: 1e-3, balance: 1e-9 },
    { links: 1, lift: 0.05, friction: 0.5, solver: "nncg", shift: 0.25, balance: 1e-9 },
    { links: 1, lift: 0.05, friction: 0.5, solver: "pgs", shift: 0.25, balance: 1e-9 },
    { links: 1, lift: 0.05, friction: 0.5, solver: "apgd", shift: 0.25, balance: 0.01 },
  ];
  for (const { links, lift, friction, solver, shift, balance } of cases)
    it(`${links} link(s) dropped from ${lift} rad, μ = ${friction}, ${solver}: loads m g/2 at the ends for 30 s`, () => {
      const sim = hingedLinks(links, lift, friction, solver);
      const h = 0.005;
      const weight = links * g;
      let worst = { hinged: 0, free: 0, balance: 0, force: 0, newton: 0 };
      for (let k = 1; k <= 30 / h; k++) {
        sim.step(1);
        if (k * h < 1) continue;
        const st = sim.state();
        const fz = (c: (typeof st.contacts)[number]) =>
          (c.bodies[1] === "floor" ? -1 : 1) * (c.normalForce * c.normal[2] + c.tangentForce[2]);
        const joint = (i: number) => st.joints.find((j) => j.id === `j${i}`)?.force[2] ?? NaN;
        let hinged = joint(1);
        let free = 0;
        let force = Math.abs(joint(1));
        for (const c of st.contacts) {
          force = Math.max(force, c.normalForce);
          if (c.point[0] < 0.01) hinged += fz(c);
          if (c.point[0] > links * 0.4 - 0.01) free += fz(c);
        }
        for (let i = 1; i <= links; i++) {
          // contacts on link i + its joint's force on it − the next joint's force on the next
          const on = st.contacts
            .filter((c) => c.bodies.includes(`l${i}`))
            .reduce((a, c) => a + fz(c), 0);
          const next = i < links ? joint(i + 1) : 0;
          worst.balance = Math.max(worst.balance, Math.abs(on + joint(i) - next - g));
        }
        worst = {
          ...worst,
          hinged: Math.max(worst.hinged, Math.abs(hinged - g / 2)),
          free: Math.max(worst.free, Math.abs(free - g / 2)),
          force: Math.max(worst.force, force),
          newton: worst.newton + (st.solver.newtonConverged ? 0 : 1),
        };
      }
      expect(worst.force).toBeLessThan(weight);
      expect(worst.hinged).toBeLessThan(shift);
      expect(worst.free).toBeLessThan(shift);
      expect(worst.newton).toBe(0);
      expect(worst.balance).toBeLessThan(balance);
    });
});

describe("projection on constraints with joints", () => {
  it("contact and joint projections together: penetration within the default 2e-3 r, no joint drift", () => {
    const { L, r } = BOB;
    // The bob starts at rest 4e-3 m into the floor (the arm 0.46° below horizontal):
    // an impact, met at its instant (impact-events.ts, a jointed body's, e = 0 too), leaves
    // no penetration of the step's to project, so the penetration is the start's, which
    // Moreau–Jean's velocity-level law keeps (u_n⁺ ≥ 0 moves nothing out) and the projection
    // removes, the arm's joint held closed beside it
    const run = (projectOnConstraints: boolean) => {
      const sim = bobOnFloor(
        0,
        { integrator: "moreau-jean", dt: 0.005, projectOnConstraints },
        -Math.asin(4e-3 / L),
      );
      let pen = 0;
      let drift = 0;
      for (let k = 0; k < 400; k++) {
        sim.step(1);
        const b = sim.state().bodies[0];
        pen = Math.max(pen, r - b.position[2]);
        drift = Math.max(drift, Math.abs(Math.hypot(b.position[0], b.position[2] - r) - L));
      }
      return { pen, drift };
    };
    const off = run(false);
    const on = run(true);
    expect(off.pen).toBeGreaterThan(3.9e-3);
    // the default projectionTolerance, 2e-3 ℓ with ℓ = r (the bob, the one moving shape)
    expect(on.pen).toBeLessThanOrEqual(2e-3 * r);
    expect(on.drift).toBeLessThan(1e-10);
  });
});

/** Ball a (1 m/s along x) touching ball b, at rest; `joints` between them if given. */
function twoBalls(contact: Record<string, unknown>, joints?: Record<string, unknown>[]) {
  return loadModel({
    gravity: [0, 0, 0],
    bodies: [
      {
        id: "a",
        mass: 1,
        position: [0, 0, 0],
        velocity: [1, 0, 0],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
      { id: "b", mass: 1, position: [0.2, 0, 0], shapes: [{ type: "sphere", radius: 0.1 }] },
    ],
    ...(joints ? { joints } : {}),
    contact: { method: "nsc", ...contact },
    solver: { integrator: "moreau-jean", dt: 0.001 },
  });
}

describe("parameters", () => {
  it("per-pair restitution overrides the default, and PATCH changes it", () => {
    const e = 0.3;
    const sim = twoBalls({ restitution: 1, pairs: [{ bodies: ["b", "a"], restitution: e }] });
    sim.step(1);
    const v = sim.state().bodies.map((b) => b.velocity[0]);
    expect(v[0]).toBeCloseTo((1 - e) / 2, 12);
    expect(v[1]).toBeCloseTo((1 + e) / 2, 12);
    const sim2 = twoBalls({ restitution: 1 });
    sim2.update({ contact: { restitution: 0 } });
    sim2.step(1);
    expect(sim2.state().bodies[1].velocity[0]).toBeCloseTo(0.5, 12);
  });

  it("per-pair friction: a block slides freely on one floor pair and not on another", () => {
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "free",
          mass: 1,
          position: [0, 0, 0.1],
          velocity: [1, 0, 0],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
        {
          id: "held",
          mass: 1,
          position: [0, 1, 0.1],
          velocity: [1, 0, 0],
          inertia: [1e6, 1e6, 1e6],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
        floor,
      ],
      contact: {
        method: "nsc",
        friction: 0.5,
        pairs: [{ bodies: ["free", "floor"], friction: 0 }],
      },
      solver: { integrator: "moreau-jean", dt: 0.005 },
    });
    sim.step(10);
    const [free, held] = sim.state().bodies;
    expect(free.velocity[0]).toBeCloseTo(1, 12);
    // held: friction μ g per unit mass (its huge inertia hardly lets it roll).
    expect(held.velocity[0]).toBeCloseTo(1 - 10 * 0.5 * g * 0.005, 5);
  });

  it("jointed bodies do not collide unless collideJointed", () => {
    const model = (collideJointed: boolean) =>
      twoBalls({ collideJointed }, [
        { id: "d", type: "distance", a: { body: "a" }, b: { body: "b" }, length: 0.2 },
      ]);
    const off = model(false);
    off.step(1);
    expect(off.state().contacts).toHaveLength(0);
    const on = model(true);
    on.step(1);
    expect(on.state().contacts).toHaveLength(1);
  });

  it("Lemke with friction and Newmark with nonsmooth contact are refused; reset forgets contacts", () => {
    expect(() =>
      twoBalls({ friction: 0.2 }).update({ solver: { contactSolver: "lemke" } }),
    ).toThrow(/lemke/);
    expect(() => twoBalls({}).update({ solver: { integrator: "newmark" } })).toThrow(/nsc/);
    const sim = twoBalls({});
    sim.step(1);
    expect(sim.state().contacts).toHaveLength(1);
    sim.reset();
    expect(sim.state().contacts).toHaveLength(0);
  });
});

describe("snapshots", () => {
  it("continue bit-identically with the warm-start memory, not without it", () => {
    // Three stacked boxes: PGS stops at its iteration limit here, so the warm start
    // decides the iterate.
    const bodies: Record<string, unknown>[] = [floor];
    for (let i = 0; i < 3; i++)
      bodies.push({
        id: `b${i}`,
        mass: 1,
        position: [0, 0, 0.1 + 0.2 * i],
        shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
      });
    const a = loadModel({
      gravity: [0, 0, -g],
      bodies,
      contact: { method: "nsc", friction: 0.5 },
      // to round-off in at most 50 sweeps, without the position projection: the sweeps
      // run out, so the warm start decides the iterate
      solver: {
        integrator: "moreau-jean",
        dt: 0.005,
        ...ROUND_OFF_CONTACT,
        maxIterations: 50,
        projectOnConstraints: false,
      },
    });
    a.step(20);
    const snap = JSON.parse(JSON.stringify(a.snapshot()));
    const b = loadSnapshot(snap);
    const c = loadSnapshot(snap);
    c.contactModel?.nonsmooth?.clear();
    a.step(20);
    b.step(20);
    c.step(20);
    expect(b.stateHash()).toBe(a.stateHash());
    expect(c.stateHash()).not.toBe(a.stateHash());
    const pa = a.state().bodies[3].position;
    const pc = c.state().bodies[3].position;
    for (let k = 0; k < 3; k++) expect(Math.abs(pa[k] - pc[k])).toBeLessThan(1e-4);
  });
});

describe("the continued solve's polishing", () => {
  /**
   * A stand-in solver on one contact: the first solve meets the tolerance (residual ½ tol,
   * r unchanged, as a converged warm start); the polishing solve adds 1 N·s to every entry
   * of r and reports `polishedResidual`.
   */
  function continued(polishedFactor: number) {
    const sim = twoBalls({ friction: 0.5 });
    sim.step(1);
    const nsc = sim.contactModel?.nonsmooth as NonsmoothContact;
    const tol = nsc.settings.tolerance;
    const seen: { r: Float64Array; met: Float64Array; polish: number } = {
      r: new Float64Array(0),
      met: new Float64Array(0),
      polish: 0,
    };
    const result = (iterations: number, residual: number): NonsmoothResult => ({
      iterations,
      residual,
      converged: residual <= tol,
      measure: "coulomb",
      status: residual <= tol ? "converged" : "max-iterations",
    });
    const stub: NonsmoothSolver = {
      name: "nncg",
      solve(p: NonsmoothProblem, r: Float64Array, o?: NonsmoothOptions) {
        const m = 3 * p.contacts;
        if (!o?.polish) {
          seen.r = r;
          seen.met = Float64Array.from(r.subarray(0, m));
          return result(3, 0.5 * tol);
        }
        seen.polish = o.maxIterations ?? 0;
        for (let k = 0; k < m; k++) r[k] += 1;
        return result(seen.polish, polishedFactor * tol);
      },
    };
    (nsc as unknown as { solver: NonsmoothSolver }).solver = stub;
    const res = nsc.solve(new Float64Array(12), 4);
    return { res, seen, tol };
  }

  it("polishing that ends above the tolerance: the iterate that met it, with its residual", () => {
    const { res, seen, tol } = continued(2);
    expect(seen.polish).toBe(3);
    expect(res).toMatchObject({ converged: true, residual: 0.5 * tol, iterations: 6 });
    expect(Array.from(seen.r.subarray(0, 3))).toEqual(Array.from(seen.met));
  });

  it("polishing that still meets it: the polished iterate, with its residual", () => {
    const { res, seen, tol } = continued(0.1);
    expect(res).toMatchObject({ converged: true, residual: 0.1 * tol, iterations: 6 });
    expect(Array.from(seen.r.subarray(0, 3))).toEqual(Array.from(seen.met, (x) => x + 1));
  });
});
