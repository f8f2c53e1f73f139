import { chainModel } from "./bench/scenes";
import { loadModel } from "./src/index";
const sim = loadModel(chainModel({ links: 100, integrator: "newmark" }));
sim.step(1500);
