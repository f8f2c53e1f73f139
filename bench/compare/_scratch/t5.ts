import { loadModel } from "../../../src/index";
import { toMoreauModel } from "../engines/moreau";
import { chainScene } from "../scene";

const scene = chainScene(10);
for (const [integ, it, proj] of [
  ["newmark", 1, false],
  ["newmark", 5, false],
  ["newmark", 5, true],
  ["moreau-jean", 1, false],
  ["backward-euler", 1, false],
] as const) {
  const m = toMoreauModel(scene) as any;
  m.solver = {
    ...m.solver,
    integrator: integ,
    newtonIterations: it,
    newtonTolerance: 1e-12,
    projectOnConstraints: proj,
  };
  const sim = loadModel(m);
  const t0 = performance.now();
  let maxd = 0;
  for (let k = 0; k < 2000; k++) {
    sim.step(1);
    maxd = Math.max(maxd, Math.abs(sim.state().energy.total));
  }
  console.log(
    integ,
    it,
    proj,
    "final E",
    sim.state().energy.total.toFixed(4),
    "max|dE|/9.81",
    (maxd / 9.81).toFixed(4),
    "ms",
    (performance.now() - t0).toFixed(0),
  );
}
