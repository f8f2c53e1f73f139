/**
 * The speed targets of issue 8, judged on one comparison run (the peers measured in the
 * same run, on the same machine):
 *   S1-1000   Moreau's steps/s ≥ the best peer's, status ok (no sphere left the box, no
 *             explosion: the protocol's `invalid` / `diverged` statuses);
 *   S2-100    ≥ the best peer's, joint drift < 1e-6 m, status ok (no divergence);
 *   S3-32     ≥ MuJoCo's (the faster of its Newton and CG solvers), with Newmark;
 *   S3-32-stiff  Moreau's status ok (stable).
 * The reference is the fastest peer whose own run was valid (status ok): an engine whose
 * chain came apart (`invalid`) or that blew up did not do the work being compared. A
 * target whose scene (or peer) is not in the run is reported as not measured. The targets
 * judge the "moreau" row (the set-up of engines/moreau.ts); Moreau's variant rows (the
 * generalized-α chain, "moreau-…") are neither judged nor counted as peers.
 * Issue 29's targets, on the defaults row ("moreau-defaults", only the README's integrator
 * and dt set): on every scene the run has it for, within 1.2× of the tuned "moreau" row's
 * steps/s, with status ok; and on S1-1000 and S2-100 at least twice the best valid peer's
 * steps/s (S2-100 with the joint drift below 1e-6 m), when the run has the defaults row there.
 */
import { isMoreau } from "./engines/index";
import type { Aggregate } from "./run";

export interface TargetVerdict {
  target: string;
  moreau: string;
  reference: string;
  met: boolean | null;
}

const PEERS_OF_MUJOCO = new Set(["mujoco", "mujoco-cg"]);

function best(rows: Aggregate[], accept: (r: Aggregate) => boolean): Aggregate | undefined {
  return rows
    .filter(
      (r) =>
        !isMoreau(r.engine) && r.status === "ok" && accept(r) && Number.isFinite(r.stepsPerSecond),
    )
    .sort((a, b) => b.stepsPerSecond - a.stepsPerSecond)[0];
}

const sps = (r: Aggregate) => `${Math.round(r.stepsPerSecond)} steps/s`;

export function targetVerdicts(results: Aggregate[]): TargetVerdict[] {
  const of = (scene: string) => results.filter((r) => r.scene === scene);
  /** `engine`'s row at least `factor` times the best accepted peer's steps/s. */
  const speed = (
    target: string,
    scene: string,
    peer: (r: Aggregate) => boolean,
    extra: (m: Aggregate) => string | null,
    engine = "moreau",
    factor = 1,
  ): TargetVerdict => {
    const rows = of(scene);
    const m = rows.find((r) => r.engine === engine);
    const p = best(rows, peer);
    if (!m || !p) return { target, moreau: m ? sps(m) : "—", reference: "not measured", met: null };
    const failure = m.status !== "ok" ? `status ${m.status}` : extra(m);
    return {
      target,
      moreau: `${sps(m)}${failure ? ` (${failure})` : ""}`,
      reference: `${factor === 1 ? "" : `${factor}× `}${p.engine} ${sps(p)}`,
      met: failure === null && m.stepsPerSecond >= factor * p.stepsPerSecond,
    };
  };
  const drift = (m: Aggregate) => {
    const d = m.accuracy.jointDrift;
    return d !== undefined && d < 1e-6 ? null : `joint drift ${d?.toExponential(1)} m`;
  };
  const twicePeers: [string, string, (m: Aggregate) => string | null][] = [
    ["S1-1000", "S1-1000 defaults ≥ 2× best peer", () => null],
    ["S2-100", "S2-100 defaults ≥ 2× best peer, drift < 1e-6 m", drift],
  ];
  const stiff = of("S3-32-stiff").find((r) => r.engine === "moreau");
  const withDefaults = results.filter((r) => r.engine === "moreau-defaults").map((r) => r.scene);
  const defaults = [...new Set(withDefaults)].map((scene): TargetVerdict => {
    const target = `${scene} defaults within 1.2× of tuned`;
    const rows = of(scene);
    const tuned = rows.find((r) => r.engine === "moreau");
    const d = rows.find((r) => r.engine === "moreau-defaults") as Aggregate;
    if (!tuned) return { target, moreau: sps(d), reference: "not measured", met: null };
    return {
      target,
      moreau: `${sps(d)}${d.status !== "ok" ? ` (status ${d.status})` : ""}`,
      reference: `tuned ${sps(tuned)}`,
      met: d.status === "ok" && 1.2 * d.stepsPerSecond >= tuned.stepsPerSecond,
    };
  });
  return [
    speed(
      "S1-1000 ≥ best peer, nothing escapes",
      "S1-1000",
      () => true,
      () => null,
    ),
    speed("S2-100 ≥ best peer, drift < 1e-6 m", "S2-100", () => true, drift),
    speed(
      "S3-32 ≥ MuJoCo, Newmark",
      "S3-32",
      (r) => PEERS_OF_MUJOCO.has(r.engine),
      (m) => (/newmark/i.test(m.method) ? null : `method ${m.method}`),
    ),
    {
      target: "S3-32-stiff stable",
      moreau: stiff ? stiff.status : "—",
      reference: "status ok",
      met: stiff ? stiff.status === "ok" : null,
    },
    ...defaults,
    // judged where the run has the defaults row, as the 1.2× targets
    ...twicePeers
      .filter(([scene]) => withDefaults.includes(scene))
      .map(([scene, target, extra]) =>
        speed(target, scene, () => true, extra, "moreau-defaults", 2),
      ),
  ];
}
