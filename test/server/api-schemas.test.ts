/** Request schemas of the service: PATCH bodies fill in no defaults, step/run/stream rules. */
import { describe, expect, it } from "vitest";
import {
  ContactPatch,
  PatchSessionBody,
  RunBody,
  SessionAssemblyBody,
  SolverPatch,
  StepBody,
  StreamQuery,
} from "../../schemas/api";

describe("PATCH bodies", () => {
  it("keep only what they name", () => {
    expect(SolverPatch.parse({ dt: 0.01 })).toEqual({ dt: 0.01 });
    expect(ContactPatch.parse({ friction: 0.2 })).toEqual({ friction: 0.2 });
    expect(PatchSessionBody.parse({ solver: { integrator: "newmark" } })).toEqual({
      solver: { integrator: "newmark" },
    });
    expect(PatchSessionBody.parse({})).toEqual({});
  });

  it("validate values and reject unknown keys", () => {
    expect(SolverPatch.safeParse({ dt: 0 }).success).toBe(false);
    expect(SolverPatch.safeParse({ integrator: "rk4" }).success).toBe(false);
    expect(SolverPatch.safeParse({ dtt: 1 }).success).toBe(false);
    expect(PatchSessionBody.safeParse({ gravity: [0, 0, "x"] }).success).toBe(false);
    expect(PatchSessionBody.safeParse({ bodies: [] }).success).toBe(false);
    expect(ContactPatch.safeParse({ restitution: 2 }).success).toBe(false);
  });
});

describe("step and run bodies", () => {
  it("step takes exactly one of steps or duration", () => {
    expect(StepBody.parse({ steps: 3 })).toEqual({ steps: 3 });
    expect(StepBody.parse({ duration: 0.5 })).toEqual({ duration: 0.5 });
    expect(StepBody.safeParse({}).success).toBe(false);
    expect(StepBody.safeParse({ steps: 1, duration: 1 }).success).toBe(false);
    expect(StepBody.safeParse({ steps: -1 }).success).toBe(false);
    expect(StepBody.safeParse({ duration: 0 }).success).toBe(false);
  });

  it("run defaults to real time; null runs as fast as possible", () => {
    expect(RunBody.parse(undefined)).toEqual({ realtimeFactor: 1 });
    expect(RunBody.parse({ realtimeFactor: null, until: 2 })).toEqual({
      realtimeFactor: null,
      until: 2,
    });
    expect(RunBody.safeParse({ realtimeFactor: 0 }).success).toBe(false);
  });

  it("session assembly bodies default every option and apply = false", () => {
    const b = SessionAssemblyBody.parse(undefined);
    expect(b.apply).toBe(false);
    expect(b.levels).toEqual(["position", "velocity", "acceleration"]);
    expect(SessionAssemblyBody.safeParse({ apply: "yes" }).success).toBe(false);
  });
});

describe("stream query", () => {
  it("defaults: every step, bodies, contacts, joints, actuators, observation and energy, JSON", () => {
    expect(StreamQuery.parse({})).toEqual({
      every: 1,
      fields: ["bodies", "contacts", "joints", "actuators", "observation", "energy"],
      format: "json",
    });
  });

  it("parses strings from the query, dedupes fields and rejects unknown ones", () => {
    expect(
      StreamQuery.parse({ every: "4", fields: "energy, bodies,energy", format: "msgpack" }),
    ).toEqual({
      every: 4,
      fields: ["energy", "bodies"],
      format: "msgpack",
    });
    expect(StreamQuery.safeParse({ fields: "bodies,velocity" }).success).toBe(false);
    expect(StreamQuery.safeParse({ every: "0" }).success).toBe(false);
    expect(StreamQuery.safeParse({ every: "x" }).success).toBe(false);
  });
});
