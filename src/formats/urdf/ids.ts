/**
 * Model ids from URDF names. A model's ids share one namespace (bodies, joints, actuators)
 * and use letters, digits and _ . : - (schemas/model.ts Id), "ground" being the world;
 * URDF names links and joints apart and allows any text. Every name keeps its text when it
 * can; otherwise it is changed (other characters become "_", a taken or reserved id gets a
 * numeric suffix) and the change is reported as a warning.
 */

const MAX_ID = 100; // schemas' Id allows 128: room for the ".actuator" / ".damping" suffixes

export class IdSpace {
  private readonly taken = new Set<string>(["ground"]);
  readonly renamed: string[] = [];

  /** A unique id for `name` (a URDF link or joint, `what` naming it in the warning). */
  claim(name: string, what: string): string {
    let base = name.replace(/[^A-Za-z0-9_.:-]/g, "_").slice(0, MAX_ID);
    if (base === "") base = "_";
    let id = base;
    for (let k = 2; this.taken.has(id); k++) id = `${base}_${k}`;
    this.taken.add(id);
    if (id !== name) this.renamed.push(`${what} "${name}" → "${id}"`);
    return id;
  }

  /** A derived id (`<joint id>.actuator`), unique too. */
  derived(id: string): string {
    let out = id;
    for (let k = 2; this.taken.has(out); k++) out = `${id}_${k}`;
    this.taken.add(out);
    return out;
  }
}
