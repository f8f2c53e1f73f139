import { spheresScene } from "../scene";
const s = spheresScene(1000);
let pairs = 0, ex: string[] = [];
for (let a = 0; a < 1000; a++) for (let b = a+1; b < 1000; b++) { const p = s.bodies[a].position, q = s.bodies[b].position; const d = Math.hypot(p[0]-q[0],p[1]-q[1],p[2]-q[2]); if (d - 0.1 <= 1e-3) { pairs++; if (ex.length < 5) ex.push(`${s.bodies[a].id} ${s.bodies[b].id} d=${d}`); } }
console.log(pairs, ex);
