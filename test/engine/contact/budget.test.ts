/**
 * iterationBudget: an explicit count wins; Lemke keeps MAX_SWEEPS pivots; the sweeping
 * solvers get ⌈CONTACT_UPDATES / contacts⌉ sweeps clamped to [MIN_SWEEPS, MAX_SWEEPS]
 * (10 000 updates: 200 sweeps up to 50 contacts, 20 from 500 on). restSweeps: the sweeps
 * past the tolerance, ⌊REST_UPDATES / contacts⌋ (none for Lemke); what they do to resting
 * columns is tested in stacking.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  CONTACT_UPDATES,
  iterationBudget,
  MAX_SWEEPS,
  MIN_SWEEPS,
  REST_FRACTION,
  REST_UPDATES,
  restSweeps,
} from "../../../src/engine/contact/budget";

describe("iterationBudget", () => {
  it("explicit count, Lemke's pivots, and the clamped contact-update budget", () => {
    expect([CONTACT_UPDATES, MIN_SWEEPS, MAX_SWEEPS]).toEqual([10_000, 20, 200]);
    expect(iterationBudget(7, "pgs", 1000)).toBe(7);
    expect(iterationBudget(null, "lemke", 1000)).toBe(200);
    const budget = (contacts: number) => iterationBudget(null, "pgs", contacts);
    expect(budget(1)).toBe(200);
    expect(budget(50)).toBe(200);
    expect(budget(51)).toBe(197); // ⌈10000/51⌉ = ⌈196.08⌉
    expect(budget(333)).toBe(31); // ⌈30.03⌉
    expect(budget(500)).toBe(20);
    expect(budget(3000)).toBe(20); // 4 would be below the floor
  });
});

describe("restSweeps", () => {
  it("⌊1000 / contacts⌋ sweeps toward 1 % of the tolerance; none for a pile, none for Lemke", () => {
    expect([REST_UPDATES, REST_FRACTION]).toEqual([1000, 1e-2]);
    expect(restSweeps("nncg", 32)).toBe(31); // a column of eight boxes
    expect(restSweeps("pgs", 250)).toBe(4);
    expect(restSweeps("nncg", 1001)).toBe(0); // a pile
    expect(restSweeps("nncg", 0)).toBe(1000);
    expect(restSweeps("lemke", 4)).toBe(0);
  });
});
