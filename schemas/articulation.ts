/**
 * What the articulated integrator (src/engine/integrators/articulated.ts) steps: rigid
 * bodies joined in trees (rooted at ground or fixed bodies; a body in no joint moves
 * freely) by spherical, revolute, prismatic and fixed joints, under any applied forces and
 * actuators, joint limits (their compliant law), motors (the joint's coordinate prescribed)
 * and compliant contact (a force). What it does not step is refused naming the part, at
 * load and on a PATCH that chooses it: nonsmooth contact, fem bodies, mimics, distance joints, joints on particles, a joint that closes a loop, and the solver
 * damping (Rayleigh terms, velocity decay), which the explicit scheme does not apply.
 */

interface End {
  body?: string;
}

/** The parts of a model the rule reads (a validated model or a PATCH's result). */
export interface ArticulationModel {
  bodies: readonly { id: string; kind: string; fixed: boolean }[];
  joints: readonly {
    id: string;
    type: string;
    a: End;
    b: End;
    mimic?: unknown;
  }[];
  contact?: unknown;
  fem?: readonly unknown[];
  solver: {
    integrator: string;
    rayleighMass: number;
    rayleighStiffness: number;
    velocityDamping: number;
  };
}

export interface ArticulationIssue {
  path: (string | number)[];
  message: string;
}

const OTHERS = "generalized-alpha, newmark or moreau-jean";

/** The parts of `m` the articulated integrator cannot step, when it is m's integrator. */
export function articulationIssues(m: ArticulationModel): ArticulationIssue[] {
  if (m.solver.integrator !== "articulated") return [];
  const out: ArticulationIssue[] = [];
  const refuse = (path: (string | number)[], what: string, remedy = `choose ${OTHERS}`): void => {
    out.push({
      path,
      message: `${what}: the articulated integrator steps trees of rigid bodies in joint coordinates; remove it or ${remedy}`,
    });
  };
  const contact = m.contact as { method?: string } | null | undefined;
  if (contact != null && contact.method !== "smc")
    refuse(
      ["contact", "method"],
      'nonsmooth contact (impulses) is not stepped by it (compliant contact, method "smc", is)',
      'use method "smc", or choose moreau-jean for nonsmooth contact',
    );
  if ((m.fem ?? []).length > 0) refuse(["fem"], "fem bodies are not stepped by it");
  for (const key of ["rayleighMass", "rayleighStiffness", "velocityDamping"] as const)
    if (m.solver[key] !== 0) refuse(["solver", key], `${key} is not applied by it`);
  // ground and the fixed bodies are one node: a joint between two bodies already connected
  // through the joints before it closes a loop
  const kind = new Map(m.bodies.map((b) => [b.id, b.fixed ? "fixed" : b.kind]));
  const root = new Map<string, string>();
  const find = (id: string): string => {
    let r = id;
    while (root.has(r)) r = root.get(r) as string;
    // path compression: every node on the way points at the root
    for (let x = id; x !== r; ) {
      const next = root.get(x) as string;
      root.set(x, r);
      x = next;
    }
    return r;
  };
  const node = (end: End) => {
    const id = end.body ?? "ground";
    return id === "ground" || kind.get(id) === "fixed" ? "ground" : id;
  };
  m.joints.forEach((j, i) => {
    if (j.type === "distance") refuse(["joints", i, "type"], `distance joint "${j.id}"`);
    if (j.mimic !== undefined) refuse(["joints", i, "mimic"], `joint "${j.id}"'s mimic`);
    for (const end of ["a", "b"] as const)
      if (kind.get(j[end].body ?? "ground") === "particle")
        refuse(
          ["joints", i, end, "body"],
          `joint "${j.id}" holds particle "${j[end].body}" (it joins rigid bodies)`,
        );
    const a = find(node(j.a));
    const b = find(node(j.b));
    if (a === b) refuse(["joints", i], `joint "${j.id}" closes a loop`);
    else if (a === "ground") root.set(b, a);
    else root.set(a, b);
  });
  return out;
}
