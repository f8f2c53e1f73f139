import { describe, expect, it } from "vitest";
import { inertiaFromShapes } from "../../../src/engine/model/inertia";

describe("inertia from shapes", () => {
  it("sphere 2/5 m r², box m/3 (b² + c²)", () => {
    const s = inertiaFromShapes(
      [{ type: "sphere", radius: 0.2, position: [0, 0, 0], orientation: [1, 0, 0, 0] }],
      3,
    );
    expect(s[0]).toBeCloseTo(0.4 * 3 * 0.04, 14);
    expect(s[4]).toBeCloseTo(0.4 * 3 * 0.04, 14);
    const b = inertiaFromShapes(
      [
        {
          type: "box",
          halfExtents: [0.1, 0.2, 0.3],
          position: [0, 0, 0],
          orientation: [1, 0, 0, 0],
        },
      ],
      2,
    );
    expect(b[0]).toBeCloseTo((2 / 3) * (0.04 + 0.09), 14);
    expect(b[4]).toBeCloseTo((2 / 3) * (0.01 + 0.09), 14);
    expect(b[8]).toBeCloseTo((2 / 3) * (0.01 + 0.04), 14);
  });
  it("a box rotated 90° about z swaps Ixx and Iyy; an offset sphere adds m d²", () => {
    const c = Math.SQRT1_2;
    const b = inertiaFromShapes(
      [
        {
          type: "box",
          halfExtents: [0.1, 0.2, 0.3],
          position: [0, 0, 0],
          orientation: [c, 0, 0, c],
        },
      ],
      2,
    );
    expect(b[0]).toBeCloseTo((2 / 3) * (0.01 + 0.09), 14);
    expect(b[4]).toBeCloseTo((2 / 3) * (0.04 + 0.09), 14);
    const s = inertiaFromShapes(
      [{ type: "sphere", radius: 0.1, position: [0, 0, 0.5], orientation: [1, 0, 0, 0] }],
      1,
    );
    expect(s[0]).toBeCloseTo(0.004 + 0.25, 14);
    expect(s[8]).toBeCloseTo(0.004, 14);
  });
  it("a capsule of zero length is a sphere; a long thin capsule matches a slice-by-slice integration", () => {
    const sph = inertiaFromShapes(
      [
        {
          type: "capsule",
          radius: 0.1,
          halfLength: 0,
          position: [0, 0, 0],
          orientation: [1, 0, 0, 0],
        },
      ],
      1,
    );
    expect(sph[0]).toBeCloseTo(0.004, 14);
    expect(sph[8]).toBeCloseTo(0.004, 14);
    // independent: a solid of revolution sliced into discs along z, each of radius ρ(z) and
    // mass dm = ρ_density π ρ² dz, contributes dm (ρ²/4 + z²) transversally and dm ρ²/2 axially
    const r = 0.1;
    const h = 0.2;
    const m = 2;
    const cap = inertiaFromShapes(
      [
        {
          type: "capsule",
          radius: r,
          halfLength: h,
          position: [0, 0, 0],
          orientation: [1, 0, 0, 0],
        },
      ],
      m,
    );
    const steps = 200000;
    const z0 = -h - r;
    const dz = (2 * (h + r)) / steps;
    let vol = 0;
    let it = 0;
    let ia = 0;
    for (let k = 0; k < steps; k++) {
      const z = z0 + (k + 0.5) * dz;
      const dzc = Math.max(0, Math.abs(z) - h);
      const rho2 = r * r - dzc * dzc;
      const dv = Math.PI * rho2 * dz;
      vol += dv;
      it += dv * (rho2 / 4 + z * z);
      ia += (dv * rho2) / 2;
    }
    expect(cap[0]).toBeCloseTo((m / vol) * it, 8);
    expect(cap[8]).toBeCloseTo((m / vol) * ia, 8);
  });
});
