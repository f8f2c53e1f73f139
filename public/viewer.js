// 3-D view of a session (three.js, z up): the bodies from the shapes of the stream's scene
// frame, joints (a marker at each joint point and a line to the centre of mass of each
// joined body), springs when the page knows the model, contact points and contact-force
// arrows (normal force red, friction orange; the force on the moving body of a contact
// with a fixed one, else on the contact's second body) whose length is proportional to it,
// with a scale that follows the largest recent force. The camera is fitted to the whole
// scene at the start (shapes, joint anchors, springs, and the sweep of the chains hinged to
// the ground); on request it follows the moving bodies. Deformable (fem) bodies are their
// surface triangles (from the scene frame) drawn at the node positions of every state
// frame (`fem` field), one BufferGeometry each updated in place, coloured by the nodal
// equivalent strain (`femStrain` field) with a legend. Quaternions on the wire are
// [w, x, y, z]; three.js takes (x, y, z, w).
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { ConvexGeometry } from "three/addons/geometries/ConvexGeometry.js";

const PALETTE = [0x4ea1ff, 0xf5a623, 0x7ed321, 0xbd10e0, 0x50e3c2, 0xf8e71c, 0xff6f61, 0x9b9bff];
const NORMAL_COLOR = 0xff4040;
const FRICTION_COLOR = 0xffa030;

/**
 * The strain colour map: blue (0) → cyan → green → yellow → red (the scale's top), as
 * stops at 0, ¼, ½, ¾, 1 interpolated linearly.
 */
const STRAIN_STOPS = [
  [0.15, 0.3, 0.95],
  [0.1, 0.8, 0.9],
  [0.2, 0.85, 0.3],
  [0.95, 0.85, 0.15],
  [0.95, 0.2, 0.15],
];

/** Writes the colour of s ∈ [0, 1] (clamped) into out[o..o+2]. */
function strainColor(s, out, o) {
  const x = Math.min(1, Math.max(0, s)) * (STRAIN_STOPS.length - 1);
  const i = Math.min(STRAIN_STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = STRAIN_STOPS[i];
  const b = STRAIN_STOPS[i + 1];
  out[o] = a[0] + f * (b[0] - a[0]);
  out[o + 1] = a[1] + f * (b[1] - a[1]);
  out[o + 2] = a[2] + f * (b[2] - a[2]);
}

/** A wire array (JSON numbers, or a msgpack bin of little-endian values) as numbers. */
function wireArray(a, Typed) {
  if (!(a instanceof Uint8Array)) return a;
  return new Typed(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
}

const tmpV = new THREE.Vector3();
const tmpQ = new THREE.Quaternion();
/** The initial viewing direction (from the target to the camera): front right, a little above. */
const VIEW_DIRECTION = new THREE.Vector3(0.35, -1, 0.3).normalize();

/** World coordinates of a point given in a body's frame. */
function worldPoint(pose, p, out) {
  if (!pose) return out.set(p[0], p[1], p[2]);
  out.set(p[0], p[1], p[2]).applyQuaternion(pose.q);
  return out.add(pose.x);
}

export class Viewer {
  /** @param {HTMLElement} container */
  constructor(container) {
    this.container = container;
    this.ok = true;
    try {
      this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    } catch (err) {
      this.ok = false;
      container.textContent = `WebGL is not available: ${err.message}`;
      return;
    }
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    this.renderer.setClearColor(0x15181c);
    container.appendChild(this.renderer.domElement);

    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 5000);
    this.camera.up.set(0, 0, 1);
    this.camera.position.set(1.5, -4, 1.5);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.addEventListener("change", () => {
      this.dirty = true;
    });
    this.controls.addEventListener("start", () => {
      this.userMoved = true;
    });

    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x303040, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(3, -5, 8);
    this.scene.add(sun);
    this.grid = new THREE.GridHelper(10, 20, 0x3a4048, 0x2a2f36);
    this.grid.rotation.x = Math.PI / 2; // GridHelper lies in x–z: turn it into the x–y plane
    this.scene.add(this.grid);
    this.axes = new THREE.AxesHelper(0.3);
    this.scene.add(this.axes);

    this.world = new THREE.Group();
    this.scene.add(this.world);
    this.bodies = new Map(); // id -> { group, fixed }
    this.poses = new Map(); // id -> { x: Vector3, q: Quaternion }
    this.joints = [];
    this.springs = [];
    this.normalArrows = [];
    this.frictionArrows = [];
    this.contactPoints = null;
    this.forceRef = 0;
    this.framed = false;
    /** follow mode: the camera keeps the moving bodies in view at every frame */
    this.follow = false;
    this.extent = 1;
    this.dirty = true;
    this.contactsDrawn = 0;
    this.renders = 0;
    this.fem = new Map(); // fem id -> { mesh, drawn }
    /** the top of the strain colour scale (follows the largest strain seen, decaying) */
    this.strainScale = 0;
    this.legend = document.createElement("div");
    this.legend.className = "strain-legend";
    this.legend.hidden = true;
    this.legend.style.cssText =
      "position:absolute;right:12px;top:12px;font:11px sans-serif;color:#cfd6de;" +
      "background:rgba(21,24,28,0.8);padding:4px 6px;border-radius:4px;pointer-events:none";
    this.legend.innerHTML =
      '<div>equivalent strain</div><div style="display:flex;align-items:center;gap:4px">' +
      '<span>0</span><span class="bar" style="display:inline-block;width:110px;height:10px;' +
      "background:linear-gradient(90deg,rgb(38,77,242),rgb(26,204,230),rgb(51,217,77)," +
      'rgb(242,217,38),rgb(242,51,38))"></span><span class="top"></span></div>';
    if (getComputedStyle(container).position === "static") container.style.position = "relative";
    container.appendChild(this.legend);

    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
    const loop = () => {
      requestAnimationFrame(loop);
      this.controls.update();
      if (this.dirty) {
        this.dirty = false;
        this.renderer.render(this.scene, this.camera);
        this.renders++;
      }
    };
    loop();
  }

  resize() {
    if (!this.ok) return;
    const w = Math.max(1, this.container.clientWidth);
    const h = Math.max(1, this.container.clientHeight);
    this.renderer.setSize(w, h);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    // a fitted view stays fitted in the new shape (unless the user has moved the camera)
    if (this.follow) this.track();
    else if (this.framed && !this.userMoved) this.frame();
    this.dirty = true;
  }

  /**
   * Rebuilds the drawing from a scene frame; `model` (optional, the session's model) adds
   * its springs and initial poses. `fit`: frame the camera on the scene (with a model at
   * once, else at the first state); false keeps the view (the same session's scene again,
   * after a reconnection).
   */
  setScene(scene, model = null, fit = true) {
    if (!this.ok) return;
    this.world.clear();
    this.bodies.clear();
    this.poses.clear();
    this.joints = [];
    this.springs = [];
    this.normalArrows = [];
    this.frictionArrows = [];
    this.forceRef = 0;
    this.contactsDrawn = 0;
    this.fem.clear();
    this.strainScale = 0;
    this.legend.hidden = true;
    if (fit) {
      this.framed = false;
      this.userMoved = false;
      this.viewBox = null;
    }
    const init = new Map((model?.bodies ?? []).map((b) => [b.id, b]));
    const extent = this.estimateExtent(scene, init);
    this.extent = extent;
    let colorIndex = 0;
    for (const b of scene.bodies) {
      const group = new THREE.Group();
      const color = b.fixed ? 0x8a939e : PALETTE[colorIndex++ % PALETTE.length];
      const material = new THREE.MeshStandardMaterial({ color, roughness: 0.55, metalness: 0.1 });
      if (b.shapes.length === 0) {
        group.add(new THREE.Mesh(new THREE.SphereGeometry(0.012 * extent, 12, 8), material));
      }
      for (const s of b.shapes) group.add(this.shapeMesh(s, material, extent));
      const m = init.get(b.id);
      const pose = {
        x: new THREE.Vector3(...(m?.position ?? [0, 0, 0])),
        q: new THREE.Quaternion(),
      };
      if (m?.orientation) {
        const [w, x, y, z] = m.orientation;
        pose.q.set(x, y, z, w).normalize();
      }
      group.position.copy(pose.x);
      group.quaternion.copy(pose.q);
      this.poses.set(b.id, pose);
      const planeOnly = b.shapes.length > 0 && b.shapes.every((x) => x.type === "plane");
      this.bodies.set(b.id, { group, fixed: b.fixed, planeOnly });
      this.world.add(group);
    }

    for (const f of scene.fem ?? []) {
      const geo = new THREE.BufferGeometry();
      geo.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * f.nodeCount), 3));
      const color = new Float32Array(3 * f.nodeCount);
      for (let k = 0; k < f.nodeCount; k++) strainColor(0, color, 3 * k);
      geo.setAttribute("color", new THREE.BufferAttribute(color, 3));
      geo.setIndex(f.triangles);
      const mesh = new THREE.Mesh(
        geo,
        new THREE.MeshStandardMaterial({ vertexColors: true, roughness: 0.6, metalness: 0.05 }),
      );
      // drawn once the first state frame has placed its nodes
      mesh.visible = false;
      mesh.userData.fem = f.id;
      this.fem.set(f.id, { mesh, drawn: false });
      this.world.add(mesh);
    }

    const jointMat = new THREE.MeshBasicMaterial({ color: 0xffe080 });
    const jointGeo = new THREE.SphereGeometry(0.015 * extent, 12, 8);
    const linkMat = new THREE.LineBasicMaterial({
      color: 0xffe080,
      transparent: true,
      opacity: 0.7,
    });
    for (const j of scene.joints) {
      const markerA = new THREE.Mesh(jointGeo, jointMat);
      const markerB = new THREE.Mesh(jointGeo, jointMat);
      const geo = new THREE.BufferGeometry();
      geo.setAttribute("position", new THREE.BufferAttribute(new Float32Array(12), 3));
      const lines = new THREE.LineSegments(geo, linkMat);
      lines.frustumCulled = false;
      this.world.add(markerA, markerB, lines);
      this.joints.push({ j, markerA, markerB, lines });
    }

    const springs = (model?.forces ?? []).filter((f) => f.type === "spring");
    if (springs.length) {
      const geo = new THREE.BufferGeometry();
      geo.setAttribute(
        "position",
        new THREE.BufferAttribute(new Float32Array(6 * springs.length), 3),
      );
      const seg = new THREE.LineSegments(
        geo,
        new THREE.LineBasicMaterial({ color: 0x9fb4c8, transparent: true, opacity: 0.8 }),
      );
      seg.frustumCulled = false;
      this.world.add(seg);
      this.springs = { list: springs, seg };
    }

    const pgeo = new THREE.BufferGeometry();
    pgeo.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * 256), 3));
    pgeo.setDrawRange(0, 0);
    this.contactPoints = new THREE.Points(
      pgeo,
      new THREE.PointsMaterial({
        color: NORMAL_COLOR,
        size: 6,
        sizeAttenuation: false,
        depthTest: false,
      }),
    );
    this.contactPoints.renderOrder = 10;
    this.contactPoints.frustumCulled = false;
    this.world.add(this.contactPoints);
    this.axes.scale.setScalar(Math.max(0.2, extent / 2));
    this.updateLinks();
    if (model && !this.framed) this.frame();
    this.dirty = true;
  }

  estimateExtent(scene, init) {
    let r = 0;
    const box = new THREE.Box3();
    for (const b of scene.bodies) {
      const m = init.get(b.id);
      if (m?.position) box.expandByPoint(tmpV.set(...m.position));
      for (const s of b.shapes)
        if (s.type === "sphere" || s.type === "capsule") r = Math.max(r, s.radius);
        else if (s.type === "box") r = Math.max(r, ...s.halfExtents);
        else if (s.type === "cylinder") r = Math.max(r, s.radius, s.halfLength);
        else if (s.type === "convex") for (const p of s.points) r = Math.max(r, Math.hypot(...p));
        else if (s.type === "mesh") for (const p of s.vertices) r = Math.max(r, Math.hypot(...p));
    }
    const size = box.isEmpty() ? 0 : box.getSize(tmpV).length();
    return Math.max(size + 4 * r, 8 * r, 0.2);
  }

  shapeMesh(s, material, extent) {
    let mesh;
    switch (s.type) {
      case "sphere":
        mesh = new THREE.Mesh(new THREE.SphereGeometry(s.radius, 32, 20), material);
        break;
      case "box": {
        const [x, y, z] = s.halfExtents;
        mesh = new THREE.Mesh(new THREE.BoxGeometry(2 * x, 2 * y, 2 * z), material);
        break;
      }
      case "capsule": {
        const g = new THREE.CapsuleGeometry(s.radius, 2 * s.halfLength, 8, 20);
        g.rotateX(Math.PI / 2); // three's capsule axis is y; Moreau's is the local z
        mesh = new THREE.Mesh(g, material);
        break;
      }
      case "cylinder": {
        const g = new THREE.CylinderGeometry(s.radius, s.radius, 2 * s.halfLength, 32);
        g.rotateX(Math.PI / 2); // three's cylinder axis is y; Moreau's is the local z
        mesh = new THREE.Mesh(g, material);
        break;
      }
      case "convex":
        // the hull of the points (the engine computes the same hull: geometry/hull.ts)
        mesh = new THREE.Mesh(
          new ConvexGeometry(s.points.map((p) => new THREE.Vector3(...p))),
          material,
        );
        break;
      case "mesh": {
        // the triangles as given, counter-clockwise seen from outside; both sides drawn so a
        // terrain seen from below or an open mesh still shows
        const g = new THREE.BufferGeometry();
        g.setAttribute("position", new THREE.Float32BufferAttribute(s.vertices.flat(), 3));
        g.setIndex(s.triangles.flat());
        g.computeVertexNormals();
        const mat = material.clone();
        mat.side = THREE.DoubleSide;
        mesh = new THREE.Mesh(g, mat);
        break;
      }
      case "plane": {
        // large: a body followed down a slope stays over it
        const size = Math.max(50, 100 * extent);
        const g = new THREE.PlaneGeometry(size, size);
        const mat = new THREE.MeshStandardMaterial({
          color: 0x59636e,
          roughness: 0.9,
          transparent: true,
          opacity: 0.55,
          side: THREE.DoubleSide,
          depthWrite: false,
        });
        mesh = new THREE.Mesh(g, mat);
        const n = new THREE.Vector3(...s.normal).normalize();
        // the plane's surface is n·x = offset in the shape frame; PlaneGeometry's normal is +z
        const inner = new THREE.Group();
        inner.userData.plane = true; // drawn as a large square: not part of the scene's bounds
        mesh.quaternion.setFromUnitVectors(new THREE.Vector3(0, 0, 1), n);
        mesh.position.copy(n.multiplyScalar(s.offset));
        inner.add(mesh);
        mesh = inner;
        break;
      }
      default:
        mesh = new THREE.Group();
    }
    if (s.position) mesh.position.add(new THREE.Vector3(...s.position));
    if (s.orientation) {
      const [w, x, y, z] = s.orientation;
      mesh.quaternion.premultiply(tmpQ.set(x, y, z, w).normalize());
    }
    return mesh;
  }

  /**
   * Places each fem body's surface at the frame's node positions (`fem` field) and
   * colours it by its nodal strains (`femStrain`, or a State's `fem` strains) on a scale
   * that follows the largest strain of recent frames.
   */
  updateFem(frame) {
    for (const f of frame.fem ?? []) {
      const entry = this.fem.get(f.id);
      if (!entry) continue;
      const attr = entry.mesh.geometry.attributes.position;
      attr.array.set(wireArray(f.positions, Float64Array));
      attr.needsUpdate = true;
      entry.mesh.geometry.computeVertexNormals();
      entry.mesh.geometry.computeBoundingSphere();
      entry.mesh.visible = true;
      entry.drawn = true;
    }
    // a State (a replayed one) has the strains in `fem`
    const source = frame.femStrain ?? frame.fem?.filter((f) => f.strain);
    if (!source?.length) return;
    let top = 0;
    const strains = source.map((f) => [f.id, wireArray(f.strain, Float32Array)]);
    for (const [, e] of strains) for (const x of e) if (x > top) top = x;
    // rises at once, decays slowly (as the contact-force scale), never below 1e-6
    this.strainScale = Math.max(top, 0.97 * this.strainScale, 1e-6);
    for (const [id, e] of strains) {
      const entry = this.fem.get(id);
      if (!entry) continue;
      const attr = entry.mesh.geometry.attributes.color;
      for (let k = 0; k < e.length; k++) strainColor(e[k] / this.strainScale, attr.array, 3 * k);
      attr.needsUpdate = true;
    }
    this.legend.hidden = false;
    this.legend.querySelector(".top").textContent = this.strainScale.toPrecision(2);
  }

  /** Applies a state frame (bodies, contacts, fem surfaces). */
  update(frame) {
    if (!this.ok) return;
    if (frame.fem || frame.femStrain) this.updateFem(frame);
    if (frame.bodies) {
      for (const b of frame.bodies) {
        const pose = this.poses.get(b.id);
        const entry = this.bodies.get(b.id);
        if (!pose || !entry) continue;
        pose.x.set(b.position[0], b.position[1], b.position[2]);
        const [w, x, y, z] = b.orientation;
        pose.q.set(x, y, z, w);
        entry.group.position.copy(pose.x);
        entry.group.quaternion.copy(pose.q);
      }
      this.updateLinks();
      if (this.follow) this.track();
      else if (!this.framed) this.frame();
      else this.widen();
    }
    if (frame.contacts) this.updateContacts(frame.contacts);
    this.dirty = true;
  }

  updateLinks() {
    const a = new THREE.Vector3();
    const b = new THREE.Vector3();
    for (const { j, markerA, markerB, lines } of this.joints) {
      const pa = this.poses.get(j.a.body);
      const pb = this.poses.get(j.b.body);
      worldPoint(pa, j.a.point, a);
      worldPoint(pb, j.b.point, b);
      markerA.position.copy(a);
      markerB.position.copy(b);
      const arr = lines.geometry.attributes.position.array;
      const ca = pa ? pa.x : a;
      const cb = pb ? pb.x : b;
      arr.set([a.x, a.y, a.z, ca.x, ca.y, ca.z, b.x, b.y, b.z, cb.x, cb.y, cb.z]);
      lines.geometry.attributes.position.needsUpdate = true;
    }
    if (this.springs.list) {
      const arr = this.springs.seg.geometry.attributes.position.array;
      this.springs.list.forEach((f, i) => {
        worldPoint(this.poses.get(f.a.body ?? "ground"), f.a.point ?? [0, 0, 0], a);
        worldPoint(this.poses.get(f.b.body ?? "ground"), f.b.point ?? [0, 0, 0], b);
        arr.set([a.x, a.y, a.z, b.x, b.y, b.z], 6 * i);
      });
      this.springs.seg.geometry.attributes.position.needsUpdate = true;
    }
  }

  updateContacts(contacts) {
    let fmax = 0;
    for (const c of contacts) {
      fmax = Math.max(fmax, c.normalForce, Math.hypot(...c.tangentForce));
    }
    // the scale follows the largest force of recent frames (decaying), so an impact's
    // spike does not shrink the arrows for long
    this.forceRef = Math.max(fmax, this.forceRef * 0.97);
    const scale = this.forceRef > 0 ? (0.25 * this.extent) / this.forceRef : 0;
    const pts = this.contactPoints.geometry.attributes.position;
    const n = Math.min(contacts.length, pts.count);
    for (let i = 0; i < n; i++) pts.array.set(contacts[i].point, 3 * i);
    pts.needsUpdate = true;
    this.contactPoints.geometry.setDrawRange(0, n);
    // the wire gives the force on bodies[1] (normal from bodies[0] to bodies[1]); against a
    // fixed body, draw the opposite force, the one on the moving body
    const sign = (c) =>
      this.bodies.get(c.bodies[1])?.fixed && !this.bodies.get(c.bodies[0])?.fixed ? -1 : 1;
    this.placeArrows(this.normalArrows, contacts, NORMAL_COLOR, scale, (c) => {
      tmpV.set(...c.normal).multiplyScalar(sign(c));
      return c.normalForce;
    });
    this.placeArrows(this.frictionArrows, contacts, FRICTION_COLOR, scale, (c) => {
      tmpV.set(...c.tangentForce).multiplyScalar(sign(c));
      return tmpV.length();
    });
    this.contactsDrawn = contacts.length;
    this.arrowScale = scale;
  }

  placeArrows(pool, contacts, color, scale, dirOf) {
    const origin = new THREE.Vector3();
    let used = 0;
    for (const c of contacts) {
      const f = dirOf(c);
      const len = f * scale;
      if (!(len > 1e-6 * this.extent)) continue;
      let arrow = pool[used];
      if (!arrow) {
        arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), origin, 1, color);
        arrow.frustumCulled = false;
        // drawn over everything: a force on a body starts at its surface and points inside
        for (const part of [arrow.line, arrow.cone]) {
          part.material.depthTest = false;
          part.renderOrder = 10;
        }
        pool.push(arrow);
        this.world.add(arrow);
      }
      origin.set(...c.point);
      arrow.position.copy(origin);
      arrow.setDirection(tmpV.normalize());
      arrow.setLength(
        len,
        Math.min(0.3 * len, 0.05 * this.extent),
        Math.min(0.15 * len, 0.025 * this.extent),
      );
      arrow.visible = true;
      used++;
    }
    for (let i = used; i < pool.length; i++) pool[i].visible = false;
  }

  /**
   * The box of what the scene draws at the current poses, planes excepted: the shapes of
   * the bodies (all, or the moving ones), their markers, and with `links` the joints'
   * anchors, the springs' ends and the point of every plane under the box's centre (the
   * floor a dropped body falls to).
   */
  sceneBox(movingOnly = false, links = true) {
    const box = new THREE.Box3();
    this.world.updateMatrixWorld(true);
    for (const b of this.bodies.values()) {
      if (b.planeOnly || (movingOnly && b.fixed)) continue;
      for (const part of b.group.children) if (!part.userData.plane) box.expandByObject(part);
    }
    for (const { mesh, drawn } of this.fem.values()) if (drawn) box.expandByObject(mesh);
    if (!links) return box;
    for (const { markerA, markerB } of this.joints) {
      box.expandByPoint(markerA.position);
      box.expandByPoint(markerB.position);
    }
    if (this.springs.list) {
      const arr = this.springs.seg.geometry.attributes.position.array;
      for (let i = 0; i < arr.length; i += 3) box.expandByPoint(tmpV.fromArray(arr, i));
    }
    if (box.isEmpty()) return box;
    const centre = box.getCenter(new THREE.Vector3());
    const onPlane = new THREE.Vector3();
    const normal = new THREE.Vector3();
    for (const b of this.bodies.values())
      for (const part of b.group.children) {
        if (!part.userData.plane) continue;
        // the plane's mesh lies on the surface, its local +z along the normal
        const mesh = part.children[0];
        mesh.getWorldPosition(onPlane);
        normal.set(0, 0, 1).applyQuaternion(mesh.getWorldQuaternion(tmpQ));
        const height = normal.dot(tmpV.subVectors(centre, onPlane));
        box.expandByPoint(tmpV.copy(centre).addScaledVector(normal, -height));
      }
    return box;
  }

  /**
   * The sphere a hinged chain can sweep: for every joint to the ground, around its anchor,
   * out to the farthest point of the bodies joined to it (directly or through other joints),
   * so that a pendulum released sideways stays in view as it swings down.
   */
  reachSpheres() {
    const links = new Map(); // body id -> ids of the bodies jointed to it
    const link = (a, b) => {
      if (!links.has(a)) links.set(a, new Set());
      links.get(a).add(b);
    };
    for (const { j } of this.joints) {
      link(j.a.body, j.b.body);
      link(j.b.body, j.a.body);
    }
    const out = [];
    this.world.updateMatrixWorld(true);
    for (const { j, markerA, markerB } of this.joints) {
      const groundA = j.a.body === "ground";
      if (groundA === (j.b.body === "ground")) continue;
      const pivot = (groundA ? markerA : markerB).position;
      const seen = new Set(["ground"]);
      const todo = [groundA ? j.b.body : j.a.body];
      let reach = 0;
      while (todo.length) {
        const id = todo.pop();
        if (seen.has(id)) continue;
        seen.add(id);
        for (const next of links.get(id) ?? []) todo.push(next);
        const body = this.bodies.get(id);
        if (!body || body.planeOnly) continue;
        const box = new THREE.Box3();
        for (const part of body.group.children) if (!part.userData.plane) box.expandByObject(part);
        if (box.isEmpty()) continue;
        const s = box.getBoundingSphere(new THREE.Sphere());
        reach = Math.max(reach, s.center.distanceTo(pivot) + s.radius);
      }
      if (reach > 0) out.push(new THREE.Sphere(pivot.clone(), reach));
    }
    return out;
  }

  /**
   * Fits the camera to the whole scene (sceneBox and the reach of the hinged chains), seen
   * from the initial direction; later frames widen the view when a body leaves it, until
   * the user moves the camera.
   */
  frame() {
    const box = this.sceneBox();
    if (box.isEmpty()) return;
    const sphere = box.getBoundingSphere(new THREE.Sphere());
    for (const r of this.reachSpheres()) sphere.union(r);
    const radius = this.frameSphere(sphere, VIEW_DIRECTION);
    this.placeGrid(sphere.center, radius);
    this.viewBox = new THREE.Box3().setFromCenterAndSize(sphere.center, tmpV.setScalar(2 * radius));
    this.framed = true;
  }

  /**
   * Points the camera at a sphere from `dir` (unit, target to camera), the sphere in full
   * view; a small one is widened to a quarter of the scene's extent. Returns the radius
   * fitted.
   */
  frameSphere(sphere, dir) {
    const radius = Math.max(sphere.radius, this.extent / 4, 0.1);
    // fit the sphere in the narrower of the two fields of view
    const vfov = (this.camera.fov * Math.PI) / 180;
    const hfov = 2 * Math.atan(Math.tan(vfov / 2) * this.camera.aspect);
    const dist = (1.1 * radius) / Math.sin(Math.min(vfov, hfov) / 2);
    this.camera.position.copy(sphere.center).addScaledVector(dir, dist);
    this.camera.near = dist / 100;
    this.camera.far = dist * 100;
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(sphere.center);
    this.controls.update();
    this.dirty = true;
    return radius;
  }

  /** The grid is the floor of a scene without planes: below everything the view holds. */
  placeGrid(centre, radius) {
    const hasPlane = [...this.bodies.values()].some((b) => b.planeOnly);
    this.grid.visible = !hasPlane;
    this.grid.position.set(centre.x, centre.y, centre.z - radius);
    this.grid.scale.setScalar(Math.max(0.05, radius / 2.5));
  }

  /** Widens the view when a body has left the framed region (unless the user took over). */
  widen() {
    if (this.userMoved || !this.viewBox) return;
    const bodies = this.sceneBox(false, false);
    if (bodies.isEmpty() || this.viewBox.containsBox(bodies)) return;
    const grown = this.viewBox.clone().union(bodies);
    const sphere = grown.getBoundingSphere(new THREE.Sphere());
    sphere.radius *= 1.1;
    this.frameSphere(sphere, this.viewDirection());
    this.viewBox = grown;
  }

  /** The current direction from the camera's target to the camera (unit). */
  viewDirection() {
    return new THREE.Vector3().subVectors(this.camera.position, this.controls.target).normalize();
  }

  /** Follow mode on or off: on, the camera keeps the moving bodies in view from now on. */
  setFollow(on) {
    this.follow = on;
    if (on && this.ok) this.track();
  }

  /**
   * Follow mode: the camera keeps the box of the moving bodies (all bodies in a scene
   * without any) in view from its current direction, so the user may still orbit.
   */
  track() {
    let box = this.sceneBox(true, false);
    if (box.isEmpty()) box = this.sceneBox(false, false);
    if (box.isEmpty()) return;
    this.frameSphere(box.getBoundingSphere(new THREE.Sphere()), this.viewDirection());
    this.framed = true;
  }

  /** Back to the whole scene (the "fit" button). */
  fit() {
    if (!this.ok) return;
    this.userMoved = false;
    this.frame();
  }

  /**
   * Pixel statistics of the last rendered image (the renderer keeps its drawing buffer):
   * the number of distinct colours (quantized) and the luminance standard deviation.
   */
  pixelStats() {
    if (!this.ok) return { distinct: 0, stddev: 0, width: 0, height: 0 };
    const src = this.renderer.domElement;
    const c = document.createElement("canvas");
    c.width = Math.min(src.width, 400);
    c.height = Math.round((c.width * src.height) / Math.max(1, src.width));
    const ctx = c.getContext("2d");
    ctx.drawImage(src, 0, 0, c.width, c.height);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const colors = new Set();
    let s = 0;
    let s2 = 0;
    const n = d.length / 4;
    for (let i = 0; i < d.length; i += 4) {
      colors.add(((d[i] >> 3) << 10) | ((d[i + 1] >> 3) << 5) | (d[i + 2] >> 3));
      const y = 0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2];
      s += y;
      s2 += y * y;
    }
    const mean = s / n;
    return {
      distinct: colors.size,
      stddev: Math.sqrt(Math.max(0, s2 / n - mean * mean)),
      width: c.width,
      height: c.height,
    };
  }

  // ---------------------------------------------------------------- picking and pushing
  // (used by the dashboard's push gesture: app.js)

  /** A ray from the camera through a point of the page (client px). */
  rayAt(clientX, clientY) {
    const rect = this.renderer.domElement.getBoundingClientRect();
    const ndc = new THREE.Vector2(
      ((clientX - rect.left) / Math.max(1, rect.width)) * 2 - 1,
      -((clientY - rect.top) / Math.max(1, rect.height)) * 2 + 1,
    );
    this.raycaster ??= new THREE.Raycaster();
    this.raycaster.setFromCamera(ndc, this.camera);
    return this.raycaster;
  }

  /**
   * The dynamic body under a point of the page (client px): `{ id, point }` with the hit
   * point in world coordinates (a THREE.Vector3), or null (nothing, a fixed body or a plane).
   */
  pick(clientX, clientY) {
    if (!this.ok) return null;
    const owner = new Map();
    for (const [id, e] of this.bodies) if (!e.fixed && !e.planeOnly) owner.set(e.group, id);
    if (owner.size === 0) return null;
    this.scene.updateMatrixWorld();
    const hits = this.rayAt(clientX, clientY).intersectObjects([...owner.keys()], true);
    for (const h of hits) {
      for (let o = h.object; o; o = o.parent) {
        const id = owner.get(o);
        if (id !== undefined) return { id, point: h.point.clone() };
      }
    }
    return null;
  }

  /**
   * Where the ray through a point of the page (client px) meets the view plane through
   * `anchor` (the plane normal to the camera's viewing direction), or null.
   */
  viewPlanePoint(clientX, clientY, anchor) {
    if (!this.ok) return null;
    const normal = this.camera.getWorldDirection(new THREE.Vector3());
    const plane = new THREE.Plane().setFromNormalAndCoplanarPoint(normal, anchor);
    return this.rayAt(clientX, clientY).ray.intersectPlane(plane, new THREE.Vector3());
  }

  /** Page coordinates (client px) of a world point, e.g. a body's origin. */
  screenPoint(p) {
    const rect = this.renderer.domElement.getBoundingClientRect();
    const v = new THREE.Vector3(p.x, p.y, p.z).project(this.camera);
    return {
      x: rect.left + ((v.x + 1) / 2) * rect.width,
      y: rect.top + ((1 - v.y) / 2) * rect.height,
    };
  }

  /** Page coordinates (client px) of a body's origin as drawn, or null. */
  bodyScreenPoint(id) {
    const pose = this.poses.get(id);
    return pose && this.ok ? this.screenPoint(pose.x) : null;
  }

  /** Draws the push gesture's arrow from `from` to `to` (world), over everything. */
  showPushArrow(from, to) {
    if (!this.ok) return;
    if (!this.pushArrow) {
      this.pushArrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), from, 1, 0x50e3c2);
      this.pushArrow.frustumCulled = false;
      for (const part of [this.pushArrow.line, this.pushArrow.cone]) {
        part.material.depthTest = false;
        part.renderOrder = 20;
      }
      this.scene.add(this.pushArrow);
    }
    const d = new THREE.Vector3().subVectors(to, from);
    const len = d.length();
    this.pushArrow.visible = len > 1e-9;
    if (this.pushArrow.visible) {
      this.pushArrow.position.copy(from);
      this.pushArrow.setDirection(d.normalize());
      this.pushArrow.setLength(
        len,
        Math.min(0.3 * len, 0.05 * this.extent),
        Math.min(0.15 * len, 0.025 * this.extent),
      );
    }
    this.dirty = true;
  }

  hidePushArrow() {
    if (this.pushArrow?.visible) {
      this.pushArrow.visible = false;
      this.dirty = true;
    }
  }
}
