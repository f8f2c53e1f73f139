/**
 * A plain object with the own properties of `fields`, added one by one by stores to a new
 * empty object: how the per-simulation aggregates that the step's hot loops read
 * (BodySystem, position snapshots, CSR matrices, integrator parameters and scheme
 * coefficients) are built, instead of returning the object literal itself.
 *
 * Why: V8 (Node 20) tracks the class of the value in each field of a hidden class. An
 * object literal with heap-object values (typed arrays, nested objects, booleans) gets
 * its field types generalized when the literal is evaluated the second time (V8 then
 * builds the literal's boilerplate), and every function optimized on the first object is
 * deoptimized ("code dependencies"). So the second simulation built in a process (a
 * server's second session, the benchmark's timed run after its throw-away one) ran its
 * first steps unoptimized. Measured on the 100-link chain (S2-100), mean step over steps
 * 0–19 / 20–39 / 40–59 of the second simulation: 2.4–3.6 / 1.1–2.0 / 0.7–1.2 ms with
 * literals, 0.7–1.2 / 0.6–0.7 / 0.5–0.7 ms with plain records (steady state ~0.3–0.5 ms);
 * the early steps allocated ~1 MB each in boxed doubles. Stores keep the field types of
 * the first object when later objects store values of the same classes.
 */
export function plainRecord<T extends object>(fields: T): T {
  return Object.assign(Object.create(Object.prototype) as T, fields);
}
