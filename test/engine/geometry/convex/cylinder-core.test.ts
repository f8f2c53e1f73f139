/**
 * The cylinder core (cylinder-core.ts): its support function h(d) = L |d_z| + r |d_⊥| and
 * support sets against dense rim samples (core-checks.ts), the cap area π r², and where a
 * line enters the solid (rayEntry) against marching along the line with the membership
 * test x² + y² ≤ r², |z| ≤ L.
 */
import { describe, expect, it } from "vitest";
import { CylinderCore } from "../../../../src/engine/geometry/convex/cylinder-core";
import { RAY } from "../../../../src/engine/geometry/convex/features";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { mulberry32 } from "../../../support/random";
import { checkSupport, type V3 } from "./core-checks";

const r = 0.25;
const L = 0.4;
const core = new CylinderCore().place(new WorldPose(), {
  type: "cylinder",
  radius: r,
  halfLength: L,
});
const inside = (x: V3) =>
  x[0] * x[0] + x[1] * x[1] <= r * r * (1 + 1e-12) && Math.abs(x[2]) <= L * (1 + 1e-12);

describe("cylinder core", () => {
  it("support function and sets against 4000 rim points: h(d) = L |d_z| + r |d_⊥|", () => {
    const rims: V3[] = [];
    for (let k = 0; k < 2000; k++) {
      const th = (2 * Math.PI * k) / 2000;
      for (const z of [-L, L]) rims.push([r * Math.cos(th), r * Math.sin(th), z]);
    }
    // Rim samples 2π/2000 apart miss the extreme by at most r (1 − cos(π/2000)) ≈ 3e-7.
    checkSupport(core, rims, inside, 1e-6);
    const d = new Float64Array([0.6, 0, -0.8]);
    const s = new Float64Array(3);
    core.localSupport(d, s);
    expect(d[0] * s[0] + d[1] * s[1] + d[2] * s[2]).toBeCloseTo(L * 0.8 + r * 0.6, 15);
    const out = new Float64Array(1);
    core.polygonArea(0, out, 0);
    expect(out[0]).toBeCloseTo(Math.PI * r * r, 15);
  });

  it("rayEntry: the first point of the line inside the solid, as found by marching", () => {
    const rnd = mulberry32(31);
    const line = new Float64Array(6);
    let hits = 0;
    for (let k = 0; k < 200; k++) {
      const p: V3 = [2 * rnd() - 1, 2 * rnd() - 1, 2 * rnd() - 1];
      const n: V3 = [rnd() - 0.5, rnd() - 0.5, rnd() - 0.5];
      const l = Math.hypot(...n);
      for (let i = 0; i < 3; i++) n[i] /= l;
      line.set([...p, ...n]);
      // March t from −4 to 4 in steps of 1e-4: the first step inside.
      let first = Number.NaN;
      for (let t = -4; t <= 4; t += 1e-4) {
        if (inside([p[0] + t * n[0], p[1] + t * n[1], p[2] + t * n[2]])) {
          first = t;
          break;
        }
      }
      const hit = core.rayEntry(line);
      if (Number.isNaN(first)) {
        // A miss, or a chord shorter than the step: then the entry is within a step of the exit.
        if (hit) expect(RAY[0]).toBeGreaterThan(-4);
        continue;
      }
      hits++;
      expect(hit).toBe(true);
      expect(Math.abs(RAY[0] - first)).toBeLessThan(1.1e-4);
    }
    expect(hits).toBeGreaterThan(20);
  });
});
