/** The issue-8 target verdicts of a comparison run, on hand-made results. */
import { describe, expect, it } from "vitest";
import type { Aggregate } from "../../bench/compare/run";
import { targetVerdicts } from "../../bench/compare/targets";

function row(
  scene: string,
  engine: string,
  stepsPerSecond: number,
  extra: Partial<Aggregate> = {},
): Aggregate {
  return {
    scene,
    engine,
    method: engine === "moreau" ? "Newmark β = ¼ γ = ½" : "",
    version: "",
    status: "ok",
    reps: 3,
    meanMs: 1000 / stepsPerSecond,
    medianMs: 1000 / stepsPerSecond,
    stepsPerSecond,
    steps: 1000,
    accuracy: {},
    runs: [],
    ...extra,
  };
}

describe("targetVerdicts", () => {
  it("compares Moreau with the best peer of the same run and checks the accuracy conditions", () => {
    const v = targetVerdicts([
      row("S1-1000", "moreau", 130),
      row("S1-1000", "ammo", 120),
      row("S1-1000", "cannon", 900, { status: "invalid" }), // its spheres escaped: no reference
      row("S1-1000", "rapier", 80),
      row("S2-100", "moreau", 6000, { accuracy: { jointDrift: 2e-6 } }),
      row("S2-100", "cannon", 5000, { accuracy: { jointDrift: 0.1 } }),
      row("S3-32", "moreau", 1000),
      row("S3-32", "cannon", 1300), // not MuJoCo: does not count for S3
      row("S3-32", "mujoco-cg", 900),
      row("S3-32", "mujoco", 400),
      row("S3-32-stiff", "moreau", 900, { status: "invalid" }),
    ]);
    expect(v.map((x) => x.met)).toEqual([true, false, true, false]);
    expect(v[0].reference).toBe("ammo 120 steps/s");
    expect(v[1].moreau).toMatch(/joint drift 2.0e-6 m/);
    expect(v[2].reference).toBe("mujoco-cg 900 steps/s");
    expect(v[3].moreau).toBe("invalid");
  });

  it("judges the moreau row only; Moreau's variant rows are not peers", () => {
    const v = targetVerdicts([
      row("S2-100", "moreau", 5000, { accuracy: { jointDrift: 5e-7 } }),
      row("S2-100", "moreau-galpha-1", 9000, { accuracy: { jointDrift: 1e-15 } }),
      row("S2-100", "moreau-galpha-0.9", 8000, { status: "diverged" }),
      row("S2-100", "rapier", 4000),
    ]);
    expect(v[1]).toMatchObject({
      met: true,
      moreau: "5000 steps/s",
      reference: "rapier 4000 steps/s",
    });
  });

  it("judges the defaults row within 1.2× of the tuned row on every scene that has one", () => {
    const v = targetVerdicts([
      row("S1-100", "moreau", 1000),
      row("S1-100", "moreau-defaults", 850), // 850 · 1.2 = 1020 ≥ 1000
      row("S2-100", "moreau", 1000),
      row("S2-100", "moreau-defaults", 800), // 960 < 1000
      row("S3-32", "moreau", 1000),
      row("S3-32", "moreau-defaults", 2000, { status: "diverged" }),
      row("S3-32-stiff", "moreau-defaults", 10), // no tuned row
    ]).filter((x) => x.target.includes("within 1.2×"));
    expect(v.map((x) => [x.target.split(" ")[0], x.met])).toEqual([
      ["S1-100", true],
      ["S2-100", false],
      ["S3-32", false],
      ["S3-32-stiff", null],
    ]);
    expect(v[2].moreau).toBe("2000 steps/s (status diverged)");
    expect(v[1].reference).toBe("tuned 1000 steps/s");
  });

  it("judges the defaults row at twice the best valid peer on S1-1000 and S2-100", () => {
    const v = targetVerdicts([
      row("S1-1000", "moreau-defaults", 200),
      row("S1-1000", "ammo", 100), // 200 ≥ 2 · 100
      row("S1-1000", "rapier", 120, { status: "invalid" }), // not a reference
      row("S2-100", "moreau-defaults", 7000, { accuracy: { jointDrift: 1e-13 } }),
      row("S2-100", "rapier", 3600), // 7000 < 7200
    ]).filter((x) => x.target.includes("≥ 2×"));
    expect(v.map((x) => [x.target.split(" ")[0], x.met])).toEqual([
      ["S1-1000", true],
      ["S2-100", false],
    ]);
    expect(v[0].reference).toBe("2× ammo 100 steps/s");
    const drift = targetVerdicts([
      row("S2-100", "moreau-defaults", 9000, { accuracy: { jointDrift: 3e-6 } }),
      row("S2-100", "rapier", 3600),
    ]).find((x) => x.target.startsWith("S2-100 defaults ≥ 2×"));
    expect(drift).toMatchObject({ met: false, moreau: "9000 steps/s (joint drift 3.0e-6 m)" });
  });

  it("a scene or peer missing from the run is not measured; a bad status fails", () => {
    const v = targetVerdicts([
      row("S1-1000", "moreau", 500, { status: "invalid" }),
      row("S1-1000", "rapier", 80),
      row("S2-100", "moreau", 500),
    ]);
    expect(v[0]).toMatchObject({ met: false, moreau: "500 steps/s (status invalid)" });
    expect(v[1].met).toBeNull();
    expect(v[2].met).toBeNull();
    expect(v[3].met).toBeNull();
  });
});
