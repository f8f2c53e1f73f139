/**
 * The cylinder's contact sampling (radius r, half-length L, axis the shape frame's local
 * z, flat caps at z = ±L): a cap that lies flush against a face is represented by
 * RIM_SAMPLES rim points at fixed angles 2πk/RIM_SAMPLES from the local x axis. They are
 * material points, so their gaps are exact and steady from step to step; the plane–
 * cylinder pair (pairs/cylinder.ts), the cylinder's cap polygons in the convex pairs
 * (convex/cylinder-core.ts) and the contact areas of rim points (contact/area.ts) all use
 * these samples.
 */

/** Rim points per cap in flush contacts (fixed angles 2πk/RIM_SAMPLES from local x). */
export const RIM_SAMPLES = 8;

/**
 * sin of the tilt below which a cap (or a box face, in the convex pairs) is treated as
 * flush: a polygon feature.
 */
export const CYLINDER_FLUSH_SIN = 0.1;
/** cos of that tilt: a cap is flush when |n·z| ≥ FLUSH_COS. */
export const FLUSH_COS = Math.sqrt(1 - CYLINDER_FLUSH_SIN * CYLINDER_FLUSH_SIN);

/** cos and sin of the rim sample angles 2πk/RIM_SAMPLES. */
export const RIM_COS = Float64Array.from({ length: RIM_SAMPLES }, (_, k) =>
  Math.cos((2 * Math.PI * k) / RIM_SAMPLES),
);
export const RIM_SIN = Float64Array.from({ length: RIM_SAMPLES }, (_, k) =>
  Math.sin((2 * Math.PI * k) / RIM_SAMPLES),
);
