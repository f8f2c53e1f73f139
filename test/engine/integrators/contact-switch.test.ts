/**
 * contact-switch.ts on a scripted impact source (the contacts' pushing flags and (h ω)² set
 * by hand): `check` finds no switch where every contact keeps its state, a resolved one
 * where only contacts with h ω ≤ 1 at both ends switched, an unresolved one where a
 * switching contact's h ω > 1 at its start or its end; the start's flags survive the
 * buffers growing; lawChanged tells a start acceleration changed by the contacts' law from
 * one within LAW_CHANGE (rounding and Newton's leftover) of the carried one; `settle` keeps
 * a converged step without an unresolved switch, halves one with it (or unconverged) while
 * a halving follows and has the last halving redone by backward Euler from the start.
 */
import { describe, expect, it } from "vitest";
import {
  ContactSwitches,
  type ImpactSource,
  LAW_CHANGE,
  lawChanged,
  Switch,
} from "../../../src/engine/integrators/contact-switch";

/** An impact source whose contacts push where `push[i]` and have (h ω)² `modes[i]` there. */
function scripted(push: number[], modes: number[]) {
  const source: ImpactSource & { push: number[]; modeValues: number[] } = {
    push,
    modeValues: modes,
    get count() {
      return this.push.length;
    },
    pushing(out: Uint8Array) {
      if (out.length < this.push.length) return this.push.length;
      for (let i = 0; i < this.push.length; i++) out[i] = this.push[i];
      return this.push.length;
    },
    modes(out: Float64Array) {
      if (out.length < this.push.length) return this.push.length;
      for (let i = 0; i < this.push.length; i++) out[i] = this.push[i] ? this.modeValues[i] : 0;
      return this.push.length;
    },
  };
  return source;
}

describe("ContactSwitches", () => {
  it("no contact changes its pushing state: none", () => {
    const source = scripted([1, 0], [4, 4]);
    const switches = new ContactSwitches(source);
    expect(switches.begin()).toBe(2);
    source.modeValues = [9, 9];
    expect(switches.check()).toBe(Switch.NONE);
  });

  it("a contact whose mode the step resolves (h ω ≤ 1 at both ends) switches: resolved", () => {
    const source = scripted([1, 1], [0.25, 4]);
    const switches = new ContactSwitches(source);
    switches.begin();
    source.push = [0, 1];
    expect(switches.check()).toBe(Switch.RESOLVED);
  });

  it("h ω > 1 at the start of a contact that stops pushing, or at the end of one that starts: unresolved", () => {
    const leaving = scripted([1, 1], [1.5, 0.25]);
    const a = new ContactSwitches(leaving);
    a.begin();
    leaving.push = [0, 1];
    expect(a.check()).toBe(Switch.UNRESOLVED);
    const meeting = scripted([0, 1], [1.5, 0.25]);
    const b = new ContactSwitches(meeting);
    b.begin();
    meeting.push = [1, 1];
    expect(b.check()).toBe(Switch.UNRESOLVED);
  });

  it("a source without modes: every switch resolved", () => {
    const source = scripted([1], [100]);
    const bare: ImpactSource = { count: 1, pushing: (out) => source.pushing(out) };
    const switches = new ContactSwitches(bare);
    switches.begin();
    source.push = [0];
    expect(switches.check()).toBe(Switch.RESOLVED);
  });

  it("more contacts than the buffers hold: grown, the start's flags kept", () => {
    const n = 40;
    const push = Array.from({ length: n }, () => 1);
    const source = scripted(
      push,
      Array.from({ length: n }, () => 4),
    );
    const switches = new ContactSwitches(source);
    expect(switches.begin()).toBe(n);
    expect(switches.check()).toBe(Switch.NONE);
    source.push = push.map((p, i) => (i === n - 1 ? 0 : p));
    expect(switches.check()).toBe(Switch.UNRESOLVED);
  });
});

describe("ContactSwitches.settle", () => {
  /** A step that records its redo: the calls in order, and what backwardEuler returns. */
  function redo(converges: boolean) {
    const calls: string[] = [];
    return {
      calls,
      restoreStart: () => calls.push("restore"),
      backwardEuler: (t: number, h: number) => {
        calls.push(`euler ${t} ${h}`);
        return converges;
      },
    };
  }

  it("converged with no unresolved switch: the step stands (null), nothing redone", () => {
    const source = scripted([1, 0], [4, 0.25]);
    const switches = new ContactSwitches(source);
    switches.begin();
    source.push = [1, 1];
    source.modeValues = [4, 0.25];
    const step = redo(true);
    expect(switches.settle(step, true, 0, 0.01, false)).toBe(null);
    expect(switches.settle(step, true, 0, 0.01, true)).toBe(null);
    expect(step.calls).toEqual([]);
  });

  it("an unresolved switch or an unconverged solve: halved (false) while a halving follows, the last halving redone by backward Euler from the start", () => {
    const source = scripted([1], [4]);
    const switches = new ContactSwitches(source);
    switches.begin();
    source.push = [0];
    const step = redo(true);
    expect(switches.settle(step, true, 0, 0.01, false)).toBe(false);
    expect(step.calls).toEqual([]);
    expect(switches.settle(step, true, 0.5, 0.01, true)).toBe(true);
    expect(step.calls).toEqual(["restore", "euler 0.5 0.01"]);
    source.push = [1];
    const failing = redo(false);
    expect(switches.settle(failing, false, 0, 0.01, false)).toBe(false);
    expect(switches.settle(failing, false, 0, 0.01, true)).toBe(false);
    expect(failing.calls).toEqual(["restore", "euler 0 0.01"]);
  });
});

describe("lawChanged", () => {
  it("a change above LAW_CHANGE (1 + ‖fresh‖∞) is the law's, one below it is not", () => {
    const carried = Float64Array.of(2, -3, 0);
    const within = Float64Array.of(2, -3 + 0.9 * LAW_CHANGE * 4, 0);
    const beyond = Float64Array.of(2, -3, 1.1 * LAW_CHANGE * 4);
    expect(lawChanged(carried, within)).toBe(false);
    expect(lawChanged(carried, beyond)).toBe(true);
    expect(lawChanged(carried, carried)).toBe(false);
  });
});
