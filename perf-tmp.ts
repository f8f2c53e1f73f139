import { chainModel, clothModel } from "./bench/scenes";
import { loadModel } from "./src/index";
function run(name: string, m: any, warm: number, steps: number) {
  const sim = loadModel(m); sim.step(warm);
  const a0 = sim.timing.assembly, s0 = sim.timing.solve;
  const t0 = performance.now(); sim.step(steps); const ms = performance.now() - t0;
  console.log(name, (ms/steps).toFixed(3), "ms/step", ((sim.timing.assembly-a0)/steps).toFixed(3), ((sim.timing.solve-s0)/steps).toFixed(3));
}
run("S2-100 newmark", chainModel({ links: 100, integrator: "newmark" }), 50, 200);
run("S2-100 moreau-jean", chainModel({ links: 100, integrator: "moreau-jean" }), 50, 200);
run("S3 32 newmark", clothModel({ n: 32 }), 10, 30);
