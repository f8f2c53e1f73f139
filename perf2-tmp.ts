import { clothModel } from "./bench/scenes";
import { loadModel } from "./src/index";
for (const ls of ["auto", "sparse-ldlt", "cg", "gmres"] as const) for (const k of [10, 1e4]) {
  const m: any = clothModel({ n: 32, stiffness: k }); m.solver.linearSolver = ls;
  const sim = loadModel(m); sim.step(5);
  const a0 = sim.timing.assembly, s0 = sim.timing.solve; const t0 = performance.now(); sim.step(40); const ms = performance.now() - t0;
  const st = sim.state();
  console.log(ls, k, (ms/40).toFixed(2), "ms/step", ((sim.timing.assembly-a0)/40).toFixed(2), ((sim.timing.solve-s0)/40).toFixed(2), "lin its", st.solver.linearIterations, "minz", Math.min(...st.bodies.map(b=>b.position[2])).toFixed(5));
}
