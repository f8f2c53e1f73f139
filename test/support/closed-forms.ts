/**
 * Closed forms the physics tests compare the engine with, computed from the physics alone.
 */

/**
 * Complete elliptic integral of the first kind K(k) = π / (2 AGM(1, √(1 − k²))), by the
 * arithmetic–geometric mean (quadratic convergence: a handful of iterations to rounding).
 */
export function ellipticK(k: number): number {
  let a = 1;
  let b = Math.sqrt(1 - k * k);
  for (let i = 0; i < 40 && Math.abs(a - b) > 1e-16 * a; i++) {
    const m = 0.5 * (a + b);
    b = Math.sqrt(a * b);
    a = m;
  }
  return Math.PI / (2 * a);
}

/**
 * Period (s) of a compound pendulum of amplitude θ0 (rad from the hanging position):
 * 4 √(I_p / (m g d)) K(sin(θ0/2)), with I_p (kg·m²) its inertia about the pivot, m (kg) its
 * mass, d (m) the pivot-to-centre distance and g (m/s²) gravity.
 */
export function pendulumPeriod(Ip: number, m: number, d: number, theta0: number, g = 9.81): number {
  return 4 * Math.sqrt(Ip / (m * g * d)) * ellipticK(Math.sin(theta0 / 2));
}
