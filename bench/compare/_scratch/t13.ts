import * as CANNON from "cannon-es";
for (const sap of [false, true]) for (const shape of [false, true]) {
  const w = new CANNON.World({ gravity: new CANNON.Vec3(0, 0, -9.81) });
  if (sap) w.broadphase = new CANNON.SAPBroadphase(w);
  const b = new CANNON.Body({ mass: 0.1, position: new CANNON.Vec3(0, 0, 1), linearDamping: 0, angularDamping: 0 });
  if (shape) b.addShape(new CANNON.Sphere(0.05));
  w.addBody(b);
  const b2 = new CANNON.Body({ mass: 0.1, position: new CANNON.Vec3(0.3, 0, 1), linearDamping: 0, angularDamping: 0 });
  if (shape) b2.addShape(new CANNON.Sphere(0.05));
  w.addBody(b2);
  const p = new CANNON.Body({ mass: 0, type: CANNON.Body.STATIC }); p.addShape(new CANNON.Plane()); w.addBody(p);
  for (let i = 0; i < 3; i++) w.step(1 / 240);
  console.log({ sap, shape }, (1 - b.position.z) / (9.81 / 240 / 240));
}
