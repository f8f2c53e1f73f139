import { loadModel } from "../../../src/index";
import { toMoreauModel } from "../engines/moreau";
import { createBodyStates } from "../engines/types";
import { energy, jointDrift } from "../probes";
import { chainScene } from "../scene";

const scene = chainScene(10);
const sim = loadModel(toMoreauModel(scene));
const st = createBodyStates(10);
let line = "";
for (let k = 0; k <= 2000; k++) {
  if (k % 200 === 0) {
    const s = sim.state();
    s.bodies.forEach((b, i) => {
      st.pos.set(b.position, 3 * i);
      st.quat.set(b.orientation, 4 * i);
      st.vel.set(b.velocity, 3 * i);
      st.omega.set(b.angularVelocity, 3 * i);
    });
    const maxw = Math.max(...s.bodies.map((b) => Math.hypot(...b.angularVelocity)));
    line += `\n[${k}] E=${energy(scene, st).toExponential(3)} moreauE=${s.energy.total.toExponential(3)} KE=${s.energy.kinetic.toExponential(3)} max|w|=${maxw.toFixed(1)} tipz=${s.bodies[9].position[2].toFixed(3)}`;
  }
  sim.step(1);
}
console.log(line);
