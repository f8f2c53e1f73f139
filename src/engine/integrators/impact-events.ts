/**
 * The impacts of jointed bodies at their instants (moreau-jean.ts, `step`).
 *
 * Moreau–Jean applies Newton's law between a step's ends, to the contacts its index set
 * activates at the start. Where the impacts cascade within a step (Newton's cradle at
 * 5 ms: its 1 mm gaps close in about 1.1 ms each at 0.89 m/s), the contacts that close
 * later in the step are met at the next step's start with their gaps already gone and
 * their balls' velocities not yet exchanged, and the step's impulses, with the joints held
 * at the velocity level over the whole step, do not pass the momentum on ball by ball: the
 * cradle example lost 56 % of its swing in 60 s at 5 ms (35 % of its energy). The contacts
 * of unjointed bodies are located in closed form within the step (impact-location.ts); a
 * jointed body's normal motion is the mechanism's, which no closed form gives. So the step
 * is split at its impacts (the event-driven scheme within the time-stepping one):
 *
 *  1. At the current time t_k (the step's start, then each impact) the contacts are
 *     detected as for a step of the time left r = t + h − t_k with γ = 1 (the contacts
 *     whose linear prediction g + r u_n⁻ closes within it, widened by the reach of their
 *     accelerations, closingReach: NonsmoothContact.updateIndexSet). Each event contact
 *     (no fem–fem contact; a jointed body at one end at least, at any restitution, e = 0
 *     too (below, inelastic contacts), or, between unjointed bodies whose pair has
 *     restitution e > 0, a pair with friction (the closed form below moves the
 *     normal alone: its tangential impulse kept the step's whole normal impulse, file
 *     comment, friction) or a rigid one turning, however slowly, its contact point moving
 *     about its centre, |ω × r| > V_EPS (turning; not a round body turning by at most
 *     TURN a step, whose lever arm stays along the normal: slowRound): the others are
 *     impact-location.ts's
 *     closed form, which holds the lever arm over the step; a box dropped spinning onto a
 *     frictionless floor at e = 1 moved up to 1.05 J a step with it,
 *     test/engine/integrators/long-run/tumbling-box.test.ts)
 *     that approaches (u_n < −V_EPS) closes at the first root τ of
 *         g + u_n s + ½ a_n s² = 0,   τ = 2 g / (−u_n + √(u_n² − 2 a_n g)),
 *     with a_n = H_n D_prev the normal component of the last smooth step's mean
 *     acceleration (0 where the memory holds none; then τ = g/|u_n|); for a spinning
 *     body's contact, a_n is the applied forces' pull now (contactPull) plus its
 *     centripetal term (centripetal), the piece aimed short by the cubic term, and its near
 *     misses are left out of the step's last piece (`next`). An event contact that does
 *     not approach, open beyond ACTIVATION_TOLERANCE, is taken the same where the applied
 *     forces pull it in (a_n = contactPull, the joints held, < 0), as a bound from rest is
 *     (below); where another contact touches its bodies, whose support the pull leaves out
 *     (a box's corner held open by the others resting), the memory's mean acceleration
 *     along it must pull it in too. So is one leaving within the band that the step's
 *     activation leaves out (g + ½ r u_n > ε_act), pulled back: at its return, never now
 *     (a bob leaving the floor that a servo presses on it was run 1.9e-4 m into it by the
 *     step). Not a jointed body's contact whose closing time τ
 *     a servo's ring would turn within, τ λ > 1 (λ the fastest rate, the joints held, of
 *     the servos that move its bodies, those of their groups: servoRate, where the proof
 *     that no other servo rings its pull stands: the pull held is a spring's, which the
 *     ring reverses):
 *     a 3-link chain on servos at k_p = 1e8 (λ = 9.8e4 /s the joints free, 5.2e4 /s
 *     held: the contacts it times so all have τ λ ≥ 6.6), started 5 cm into the
 *     floor, had its second 5 ms step cut into 5 pieces (0.13 to 2.6 ms) chasing contacts
 *     0.12 to 0.98 m open and receding at up to 400 m/s that the servos' pull (up to
 *     1.9e7 m/s², τ λ 12 to 810) closed on paper, none of which closed; its unresolved
 *     servos then integrated piece by piece booked −60 J of energy.error
 *     (test/engine/simulation/servo-balance.test.ts).
 *  2. A contact with g ≤ NOW_GAP (1e-12 m) or τ ≤ NOW·h (1e-9 of the step; g ≤ 0
 *     included: a piece that overshot) meets its impact now: with the contacts touching
 *     it (g ≤ 2 ACTIVATION_TOLERANCE, through the bodies they share and the joints: the
 *     impulse reaches every body of a joint's group in zero time, AccelerationStepper
 *     .constraintGroups) it takes Newton's law
 *     at once, zero duration, with the joints and the bounds of joint limits touching now
 *     (gap ≤ ACTIVATION_TOLERANCE, a body the impact reaches at one end: H's rows beside
 *     the contacts', each with its own restitution, JointLimitProblem.touchingRows):
 *         M Δv = Hᵀ P + Gᵀ λ,   G Δv = 0,
 *         w = H (v⁻ + Δv) + e min(H v⁻, 0) ≥ 0 ⊥ P ≥ 0,
 *     Δv = Σ_j P_j x_j with x_j = M⁻¹H_jᵀ projected onto G x = 0 in the kinetic metric
 *     (x − M⁻¹Gᵀ S⁻¹ G x, S = G M⁻¹ Gᵀ: the joints' projection workspace,
 *     constraints/project.ts), the LCP with the Delassus matrix D_ij = H_i x_j solved by
 *     Lemke (exact). At e = 1 it keeps the kinetic energy: ΔT = Σ P_i (u_i⁺ + u_i⁻)/2 = 0
 *     on the contacts with P_i > 0 (u_i⁺ = −u_i⁻), and the momentum about any hinge axis
 *     (a hinge's reaction has no moment about it). The kinetic energy it changes (e < 1)
 *     is the contacts' work (removedEnergy); its contact impulses P_j and joint impulse
 *     Σ_j P_j λ_j (λ_j = −S⁻¹ G x⁰_j, x⁰_j = M⁻¹H_jᵀ: M Δv = Hᵀ P + Gᵀ Σ_j P_j λ_j) go
 *     into the step's totals (below).
 *     Reached through shared bodies alone, one link's impact left the contacts touching its
 *     neighbours, which the joints turned, approaching, each then an impact of its own that
 *     left the first cluster approaching again: bench/impacts.ts' 6-link chain at e = ½
 *     (1/240 s) alternated 4 to 6 impacts an instant between its links' clusters, and its
 *     step 317 met MAX_EVENTS; through the joints, none of its 1200 steps (5 s) does, 9
 *     impacts a step at most (a link rocking between its edges within the band), 976 in
 *     all (787 before), energy.error −2.5e-4 J at 5 s (−9.4e-4 J);
 *     at 1/100 s 1 step of 500 unresolved (14), at e = 0 52 impacts in 5 s (357)
 *     (test/engine/integrators/impact-events.test.ts).
 *  3. Otherwise the integrator takes its own step (its halvings, error control and
 *     projections included) to the earliest τ, the approaching event contacts deferred
 *     (NonsmoothContact.defer: not activated in that piece, whose index set would take a
 *     contact within ε_act of closing, Newton's law at the piece's start, first order in
 *     its gap: a 6e-8 m gap turned the normal enough to miss the bob's closed form below
 *     by 2.6e-7 m/s), and the loop goes on from 1. τ misses the gap's curvature (a_n
 *     holds no (dH/dt) v term, sphere on sphere), so the first piece typically ends 1e-8
 *     to 1e-7 m short and a second, shorter piece closes it (Newton's iteration on the
 *     gap): two pieces an impact. The piece to the step's end, no impact due within it,
 *     is the integrator's step as without events (nothing deferred).
 * At most MAX_EVENTS impacts and MAX_PIECES pieces a step: the rest of the step is then
 * the integrator's step whole (Newton's law on its active contacts together, as without
 * events; the joint limits' bounds not touching left to the limits' projection,
 * JointLimitProblem.deferApart), and the step's stats say so (impactsResolved false; impacts: those met).
 * The ring's end: the pieces follow the exact motion, each with its own servo lead
 * (moreau-jean.ts pieceStep), where the step whole integrates the law of its servos that no
 * halving resolves, their lead the step's (AccelerationStepper.keepStepLead), which damps
 * what it does not resolve. A servo's ring chased by the pieces (their closing times taken
 * under the pull now, which a spring's pull overstates) so ran on undamped until they ran
 * out, and the rest of the step then started the step's law from the ring's speed: a rod
 * (I = 0.24 kg·m²) on a servo at k_p = 1e10, k_d = 0 (31 µs a period) ringing between 0 and
 * −1 rad took 64 pieces (10.7 periods, 0.34 ms) of its first 5 ms step, and the rest,
 * from 8.1e4 rad/s, sub-steps at the halving limit turning it 23 rad each (stepError 1.3e3
 * against 3e-4), booked −4.99e8 J of energy.error, and the next step's rest ran 0.83 rad
 * past its bound at 0.1 rad. So where such servos drive the step, the piece after the last
 * (to the next closing `next` finds, short of every bound) takes the step's lead however
 * short it is (AccelerationStepper.beginStepLeadAt): its damping δ k_p (δ = h/2) stops the
 * ring within it (from 8.1e4 to 136 rad/s in 3.7 µs), and the rest starts from the step's
 * law. That rod now never passes its bound (4.5e-14 rad), energy.error 0.12 J of its
 * 1.25e9 J over 10 s, E + energy.dissipated never rising by more than 2.7e-4 J a step
 * (test/engine/integrators/limit-impacts.test.ts).
 * A servo's reach: the pull now overstates a spring's pull towards a bound its ring never
 * reaches (a rod at q = 0 under a servo to q* = −0.5 rad is pulled at k_p 0.5/I towards a
 * bound at −3 rad, where the spring turns it back at −1), and its pieces chased that
 * bound: the rod above at k_p = 1e8 or 1e10 spent all 64 pieces of its first step on its
 * ring (377 sub-steps; 16 without the bound). So `next` leaves out a bound b of a joint
 * that a position servo drives where the energy cannot take it there (outOfReach):
 * Φ(b − q*) > B, B = T + Σ_j Φ_j at the current state (reachBudget; T = ½ vᵀ M v, Φ_j the
 * position servos' potentials ∫₀^e clamp(k_p s) ds, JointActuator.storedEnergy). Proof that
 * the motion from now on never reaches such a bound, where the model is the budget's
 * (`budgeted`, reachBudget: no contacts, no motor, no gravity, no compliant limit's law,
 * every applied force a position servo with a constant target or the gyroscopic term): the
 * joints (scleronomic) and the gyroscopic torque do no work; a servo's effort
 * τ = clamp(−k_p e − k_v q̇) (k_v = k_d and the step's lead δ k_p, both ≥ 0; e = q − q*)
 * has τ q̇ ≤ −clamp(k_p e) q̇ = −Φ̇ (clamp is monotone and −k_v q̇ has the sign of −q̇);
 * the bounds' impacts (e ≤ 1) keep or lose kinetic energy and their holds do no work (q̇ = 0
 * on the bound). So E = T + Σ_j Φ_j never rises above B, and, every term being ≥ 0,
 * Φ_i(q − q*_i) ≤ B at every later instant: q stays in the interval where Φ_i ≤ B (Φ_i is
 * even and rises with |e|), and a bound with Φ_i(b − q*_i) > B lies outside it. For the
 * undamped linear servo on a joint alone this is the ring's amplitude: B = ½ I q̇² +
 * ½ k_p e², q = q* + A cos(ωt + φ) with A = √(2B/k_p). The margin REACH_MARGIN on B
 * keeps a bound within rounding of the amplitude chased (a piece's own motion may hold a
 * little more than the exact one); a bound left out is still the step's own Newton law's
 * (its activation) and the projection's, as before the events. The rod above now takes its
 * ring as without the bound, bit for bit (16 sub-steps its first step, 269 and 303 in its
 * first 200 steps at 1e8 and 1e10, for 968 and 688), and a ring just short of its bound
 * (by 1e-3 of its amplitude) too; one just past it meets the bound at the closed form's
 * instant (limit-impacts.test.ts).
 * A damper's pull: the pull now, held over the time left, reads a damper's −γ q̇ (a servo's
 * k_d, its lead's δ k_p) as a constant acceleration, which turns a joint leaving a bound back
 * onto it within 2 u/γ; the pieces then chased the quadratic's apex, u/|a_n| = 1/γ away,
 * where the damped motion, q̈ = a₀ − γ q̇, never turns (a₀ ≥ 0) or crawls back at most at the
 * terminal |a₀|/γ. So a bound left at u > V_EPS whose return the quadratic times within the
 * step has its pull read again at the coordinate's rate 0 (pullAtRest, a force evaluation),
 * the difference taken for a linear damper, and is left out where that motion cannot close
 * the gap within the time left (dampedAway: g γ/|a₀| ≥ r). A rod (I = 1/3 kg·m², k_p = 20)
 * whose servo's k_d went from 1 to 1e6 (γ = 3e6 /s) at 1.4 rad/s, 0.43 rad from its lower
 * bound, had that step cut into 4 pieces under backward Euler (24 sub-steps for 16 under
 * symplectic Euler, 8 for 1 under Moreau–Jean) for a return 1e5 s away; now the step is
 * whole, bit for bit the same rod's without limits (theta-servo-lag.test.ts). Left: the
 * contacts' returns (`next`'s closingTime) still hold their pull.
 * A step in which no event contact closes is the
 * integrator's step, unchanged (its detection runs twice; once without a pair with e > 0
 * nor a jointed body, where no body is jointed nor turns (|ω| ρ > V_EPS, slowRound aside) nor has a pair
 * with friction, or where those bodies' contacts are out of reach of the step:
 * mayHaveEvents).
 * Inelastic contacts (e = 0) of jointed bodies are events too, as inelastic bounds are
 * (below): left to the step's own law, whose Newton law acts over the step with the joints
 * held at the velocity level, a pendulum bob (1 kg, 0.5 m arm hinged 0.59 m over the
 * floor, released level) arriving at 6.15 rad/s left the floor at −1.35 rad/s (h = 1/100
 * s; −0.41 at 1/240 s), energy.error +1.06 J (+0.32 J) of its 4.8 J swing, and at μ = 0.3,
 * where its W is of rank 1, the step's contact solve drifted along W's null space
 * (impulses up to 1.2e6 N s, energy.error 1.05e3 J). Met at its instant, the impact's law
 * at e = 0 makes u_n⁺ = 0: ω⁺ = 0 (to 6e-14 rad/s, with friction too: sticking, the
 * impulse inside the cone), the arrival's kinetic energy dissipated exactly, the bob then
 * resting at its arrival pose; energy.error the smooth swing's (−5.9e-4 J, −3.4e-3 J)
 * (test/engine/integrators/impact-friction.test.ts). The cost: `next`'s detection where a
 * jointed body's contacts are within reach and may approach (ContactClearance), as at
 * e > 0: a 6-link chain of boxes swinging onto a floor at e = 0, μ = 0.5 detected 2.06
 * times a step at 1/240 s (1.12 before; 2.02 at e = ½) and 2.84 at 1/100 s (1.31); with
 * the clearance's box supports, 2.34 over 5 s, and 1.59 with its slow pairs (links resting
 * or sliding flat on the floor) passed where no contact of theirs can be timed from rest
 * (mayHaveEvents, quiet; bench/impacts.ts; bench/README.md, "Impact events' detections").
 * Newton's cradle at 5 ms: its swing energy within 2.4e-4 over 60 s (35 % lost before),
 * ball 5's first swing 29.997° of ball 1's 30° (19.8° before); its cascade step (4 impacts)
 * takes 9 pieces, 177 of the 12000 steps split, Newton iterations 2.83 a step (2.62).
 * The bounds of joint limits with restitution are event rows as the contacts (moreau-jean.ts
 * builds the events with limits alone too): gap the coordinate's distance to its bound, u
 * its rate towards it, a_n the pull along it (coordinatePull, below), deferred
 * (JointLimitProblem.defer) and met at their instants the same; at the impact a bound's
 * rebound that the steps cannot resolve ends at rest (rowRestitution). Left to the steps'
 * own Newton law, those impacts' timing error kept a joint at e ≥ 0.9 hopping in cycles of
 * about 2/(1 − e) steps for ever (a 1 kg, 1 m rod dropped from level onto its bound at
 * e = 0.95, 1/60 s: 0.8 rad/s after 60 s), and its rebound energies were up to 85 % off
 * e^{2k} of the drop; now it rests from 9.6 s, those energies to 6.6e-4 (1/60 s) and 6e-5
 * (5 ms), and at e = 1 its energy never rose above the start's (+0.106 J before, booked as
 * the limit's negative dissipation) (test/engine/integrators/limit-impacts.test.ts).
 * Inelastic bounds (e = 0) are met at their instants too (and from rest the others, below): the step's activation, g + h u/2
 * ≤ ε, reads the rate at the step's start, so a bound that a stiff servo drives the joint
 * onto from rest within the step was left out of it, the step ran past the bound, ringing
 * about the servo's target, and the position projection set it back (limit-problem.ts),
 * against the servo's spring, whose work it did not count. Their a_n is the coordinate's
 * acceleration under the applied forces now, the joints held (coordinatePull: the memory's
 * mean acceleration of the last step knows nothing of a command that just changed), and
 * they are taken when they approach (u < −V_EPS) or are pulled towards the bound from a gap
 * wider than ACTIVATION_TOLERANCE (a bound touching without approaching is the step's own
 * Newton law's). A servo's damping falls as the joint nears its target, so the quadratic,
 * its deceleration held, comes after the arrival: a decelerating approach takes pieces of
 * the constant-rate time g/|u| instead, which end short of the bound by ½ a_n τ² (Newton's
 * iteration on the gap), never past it, and a near miss of the quadratic (its closest
 * approach within half the gap) is read again from there (boundClosing). A bound is met
 * now at g ≤ NOW_GAP only (approaching): a piece of τ ≤ NOW·h is still taken, which closes the
 * gap to rounding (an impact at a gap of NOW·h |u|, up to 4e-10 rad at 170 rad/s, left the
 * joint held that far short of the bound, its servo's effort off by k_p times it). At the
 * impact, e = 0: the joint stops on the bound, which the rest of the step holds, the
 * largest passage the limits' projection then finds 9e-15 rad. A 3-link chain's middle servo
 * commanded 0.5 rad against a bound at 0.45 rad from rest (5 ms): energy.error, set in the
 * first two steps, from 111 J (k_p = 1e6, k_d = 1e3), 6.4 J (1e8, 0), 2.3e4 J (1e8, 1e5),
 * 2.4e6 J (1e10, 1e7) to 4.0e-4, 1.1e-3, 4.7e-4 and 2.0e-4 J in the first, within the
 * scheme's without the bound, no piece ending past it; its limit effort in that step the
 * impact's I u_b and the hold's over the rest of the exact arrival to 0.27 % (0.04 %
 * undamped); its undamped ring (1e6, 0) had never ended a step past the bound, which never
 * acted, until its 474 rad/s swing met the far one, T + V + k_p e²/2 jumping from 1.25e5
 * to 3.6e5 J; it now rests on the bound from 1.2 ms
 * (test/engine/integrators/servo-chain.test.ts). A 1 kg, 1 m rod dropped from level onto
 * an inelastic bound: energy.error 1.4e-3 J at 1/60 s (2.4e-3 before).
 * Bounds with restitution are predicted so too where the joint does not approach them:
 * from rest, pulled towards them (before, a servo driving the joint from rest into such a
 * bound ran the step past it: the chain's first step 0.046 to 0.058 rad past at e = ½ and 1,
 * energy.error 6.4 J to 1.5e6 J, 0.23 rad past at k_p = 1e5; now ≤ 1.1e-14 rad and ≤ 1.1e-3
 * J), and leaving them, pulled back (a rebound returning within the step: its return at
 * (u + √(u² − 2 a_n g))/(−a_n), closingTime; without it, a damped servo's rebound at e = ½
 * came back 0.05 rad past the bound within the step). Approached, every bound takes the pull
 * now too (before, those with e > 0 took the last step's mean acceleration, which knows
 * nothing of a command switched since: a rod under a stiff servo whose command switches
 * mid-swing ran pieces 5.3e-3 (e = ½) and 1.1e-2 rad (e = 1) past its bound,
 * limit-impacts.test.ts). The pull is the exact motion's, but the scheme's own piece goes
 * further: the bodies step in maximal coordinates, and the joints' projection turns a hinge
 * on by about Δ³/4 beyond the trapezoid's Δ for a turn Δ (the 1 m rod falling onto its bound
 * at 3.6 rad/s: +2.0e-5, 1.5e-6, 1.9e-7 rad for pieces of 11.7, 5 and 2.5 ms), so the
 * quadratic's piece ended 1e-5 rad past the bound, the projection's lift the rod's energy
 * rise at e = 1 (3.7e-3 J over 60 s; the memory's larger mean acceleration of the step
 * before, where gravity's moment was larger, had landed its pieces short by luck). So a
 * piece that accelerates onto the bound (or from rest) is aimed short of it by g·min(½, g²)
 * (g in rad: Δ³ ≥ Δ³/4), the next piece closing the rest (boundClosing); and a rebound
 * pulled back within the step ends its piece at its apex, u/(−a_n), before the return: the
 * pull grows as the joint leaves a spring's or gravity's bound, so the return held at the
 * start's pull comes late, and a servo's rebound (k_p = 3000, its command switched to 3 rad)
 * returned 3.6e-5 rad past the bound. None of the rod's nor the servo's pieces now ends past
 * (≤ 2.2e-16 rad), the rod's energy at e = 1 within 9.1e-5 J over 60 s (2.0e-4 J with the
 * memory). A rebound the steps resolve leaves
 * at e u_b: the chain at k_p = 1e5, k_d = 0 ends its first step at the exact bounce's
 * motion to the θ-scheme's error without the bound, its impact's loss ½ I u_b² (1 − e²).
 * The pull costs a force evaluation and a column a limit: taken only for the bounds within
 * the step's reach under a bound on it (far), the 3-link servo chain with bounds it never nears
 * evaluates none (3 columns and a force evaluation a step before, next() 15 to 33 us a step
 * -> 0.7 to 2 us), the 7-axis arm 0.15 a step (10.2; next() 130 -> 9 us of its ~10 ms step);
 * a model whose applied forces change with time (a time function's command or load) pays
 * a force evaluation and a column a limit at each `next` (far).
 * Friction: an event contact with friction takes Coulomb's law at its impact, Moreau's
 * impact law (Siconos' NewtonImpactFrictionNSL): on each such contact's local impulse
 * (P_n, P_t) and velocity u⁺ = u⁻ + W P (W the Delassus matrix of its three rows, n, t1,
 * t2, on the joints' tangent as above),
 *     w_n = u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0,   ‖P_t‖ ≤ μ P_n, u_t⁺ = 0 inside, u_t⁺ = −κ P_t on the rim,
 * solved by Gauss–Seidel (a sphere's decoupled block exactly in one sweep). Where the
 * normal and tangential rows couple (a box's corner: W_nt ≠ 0) that law can make energy
 * (Kane's paradox: ΔT = P·u⁺ − ½ Pᵀ W P, where Coulomb's law makes P_t·u_t⁺ ≤ 0 but
 * Newton's P_n u_n⁺ = −e P_n u_n⁻ ≥ 0, and the normal impulse also undoes what the
 * tangential one did to u_n): the spinning box of long-run/tumbling-box.test.ts on a floor at
 * e = 1, μ = 0.3 gained up to 0.76 J at single impacts so. Such an impact takes instead the
 * law on w = u⁺ + e u⁻ in all three rows (Moreau's weighted velocity, the tangential
 * rebound the normal's), which cannot: P·w ≤ 0 (Coulomb's law, maximal dissipation) gives
 *     ΔT = P·u⁻ + ½ Pᵀ W P ≤ −Pᵀ W P/(1 + e) + ½ Pᵀ W P = −(1 − e) Pᵀ W P / (2 (1 + e)) ≤ 0
 * (one e for the impact's rows; 98 of that box's 211 frictional impacts in 10 s at e = 1).
 * Its energy.error then 1.2e-4 J after 10 s (−0.038 J with the step's own law), no step's
 * T + V rising by more than 6e-6 J (0.44 J). A welded pair landing flat on a floor at
 * μ = 0.5, e = ½ leaves at e v* (3 % fast before: its impact left to the step's law).
 * The law on w is taken too where Moreau's has no solution, its Gauss–Seidel stopped by
 * IMPACT_SOLVE's bound with a residual above IMPACT_STALL ‖q‖∞ (of the impact's own speed:
 * a jam; below it, a stall on a rank-deficient Delassus matrix, the law met all the same):
 * a jointed body whose friction's moment about its joint outweighs the normal's. A bob on a
 * 0.5 m arm hinged 0.59 m over the floor meets it 0.0995 m before the bottom: one degree
 * of freedom, u_n = a ω, u_t = b ω (a = −0.0995 m, b = −0.59 m), W = [a; b][a b]/I_h of
 * rank 1; at μ > |a/b| = 0.169 and e > 0 no impulse satisfies it (P_n = 0 or sticking leave
 * w_n < 0, and the rebound ω⁺ = −e ω⁻ slides back, where Coulomb's P_t = −μ P_n sign(u_t⁺)
 * turns it the other way). The sweeps ran along W's null space (P_n 3.1e6 N s): at μ = 0.3,
 * e = 1 the bob left at 285 m/s and the run failed (Newton, 1/240 s) or diverged (1/100 s);
 * at e = ½ each impact halved ω into the floor, 16 a step, and it stopped dead. The law on
 * w has the solution ω⁺ = −e ω⁻, w = 0, the frictionless rebound, energy kept at e = 1
 * (test/engine/integrators/impact-friction.test.ts). A law whose solve stops short all
 * the same (the fallback's Gauss–Seidel at its bound above IMPACT_STALL ‖q‖∞, or Lemke's
 * ray frictionless) is taken as it stands and the step says so, contactConverged false and
 * its residual in contactResidual (before, silently: impact-friction.test.ts holds the
 * fallback to 0 sweeps). Until 2026-12-07 every stop at the bound counted as no solution:
 * on bench/impacts.ts' 6-link chain (e = ½, μ = ½, 1/240 s, 5 s) 3 of its 8 fallbacks came
 * from Moreau's law stalled at 4e-12 to 2.3e-9 m/s (impacts at 0.05 m/s), 4 steps said
 * contactConverged false for the fallback's stalls at 3.0e-8 to 5.0e-8 m/s; now 1 fallback
 * (Kane's), none flagged, energy.error −1.4e-3 → −8.3e-4 J (impact-friction.test.ts).
 * Every impact of a pair with friction is so: left to the step's law (a body not turning,
 * impact-location.ts's closed form then correcting the normal alone), the tangential
 * impulse took the step's normal impulse, m g h more than the
 * impact's, up to μ m g h too much: a ball without spin landing at (2, 0, −3) m/s on a
 * floor at μ = 0.05, e = ½ left with v_x 8.3e-4 (h = 1/240 s) and 8.0e-3 m/s (1/100 s)
 * below the closed form; now to 1e-15 (test/engine/integrators/impact-friction.test.ts).
 * Left as without events: fem–fem contacts and impacts that touch one. A bob resting on its bound and struck into it now
 * stays and the ball rebounds as from a fixed body (before, with the bound left to the next
 * piece, the bob turned as if free and that piece's limit impulse stopped it: the ball's
 * rebound 0.31 m/s off, the bob's energy lost at the bound's e = 0).
 * The energy balance weighs a split step's dissipative forces piece by piece, each impact
 * a piece of length 0 (SubstepObserver.substepDone(t, 0)), so that the piece after it
 * starts from its velocities (from the velocities before it, a bob on a 0.5 N s/m damper
 * bouncing at e = 1 put −0.15 J into energy.error in 5 s at 1/60 s; now 8.4e-6 J).
 * A split step reports its totals: the State's joint multipliers are Λ/h, Λ = Σ_i Λ_i +
 * the impacts' joint impulses, Λ_i each accepted sub-step's joint impulse (a contact
 * step's h_i λ_i; a smooth step's h_i θ λ̃ + μ, the force along its start configuration
 * and its end projection's impulse: AccelerationStepper.addJointImpulse), each joint
 * limit's effort Σ_i h_i effort_i / h, and each contact's impulse its sum over the
 * sub-steps and impacts (NonsmoothContact.beginSplit), its force that over h, so that
 * M (v_{t+h} − v_t) = h f̄ + Gᵀ Λ + Hₗᵀ Pₗ + Σ H_cᵀ P_c
 * (G's translational rows fixed: exactly; a joint's reported torque sums rows whose G
 * turned within the step). Before, they were the last piece's: the cradle's strings
 * missed the impacts' joint impulses (0.44 N s), and a contact resting through the step
 * reported m g times the last piece's length as its impulse. (A step not split reports
 * a smooth step's λ as the end's consistent multipliers, not its mean force.)
 * A piece that ends at an impact changes the step size the smooth scheme's O(h²)
 * energy error goes with: a hinged bar bouncing on the floor at e = 1 loses 5e-5 of its
 * energy in 10 s at 1/60 s (to rounding before: the velocity-level step is reversible on a
 * single hinge), where a pendulum bob at e = 0.6 now keeps e^{2k} of its swing energy to
 * 7e-5 (2.8e-2 before).
 */
import { JointActuator } from "../actuators/actuator";
import { CompliantJointLimit } from "../actuators/joint-limit";
import { type JointLimitProblem, unresolvedRebound } from "../actuators/limit-problem";
import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { type ProjectionWorkspace, projectionWorkspace } from "../constraints/project";
import { ContactClearance, type SlowPairs } from "../contact/clearance";
import type { ContactSet } from "../contact/contact-set";
import type { NonsmoothContact } from "../contact/nonsmooth-contact";
import { ACTIVATION_GAMMA, ACTIVATION_TOLERANCE } from "../dynamics/one-step-problem";
import type { ForceEffector } from "../forces/effector";
import { GravityEffector } from "../forces/gravity";
import { GyroscopicEffector } from "../forces/gyroscopic";
import { grow } from "../math/grow";
import {
  BodyKind,
  type BodySystem,
  getVelocity,
  kineticEnergy,
  massSolve,
  setVelocity,
} from "../model/body-system";
import { LemkeSolver } from "../solvers/nonsmooth/lemke";
import { CoulombNewton } from "../solvers/nonsmooth/newton";
import { PgsSolver } from "../solvers/nonsmooth/pgs";
import type { NonsmoothProblem } from "../solvers/nonsmooth/types";
import {
  type AccelerationStepper,
  groupRoot,
  heldInverseInertia,
  joinGroups,
  jointTangent,
} from "./acceleration-step";
import {
  type IntegratorMemory,
  resetStepStats,
  type StepStats,
  type SubstepObserver,
} from "./integrator";

/** Impacts a step resolves at their instants at most (file comment). */
export const MAX_EVENTS = 16;
/** Pieces a step is split into at most (file comment, 3). */
const MAX_PIECES = 4 * MAX_EVENTS;
/** Gap (m) and fraction of the step within which an impact is met now (file comment, 2). */
const NOW_GAP = 1e-12;
const NOW = 1e-9;
/**
 * The frictional impact's solve (ImpactEvents.solveImpact): Gauss–Seidel from 0 to a
 * residual of 1e-13 m/s (its problems are a few contacts: a sphere's decoupled block in
 * one sweep), its sweeps bounded far beyond need. A solve that stops at the bound is
 * taken for one without a solution only where its residual is above IMPACT_STALL.
 */
const IMPACT_SOLVE = { tolerance: 1e-13, maxIterations: 100000, warmStart: false } as const;
/**
 * Gauss–Seidel's progress test (solveImpact): its sweeps run in windows of this many; the
 * first window after which the residual has not halved over the window is a stall, and the
 * iterate goes to the polish (solvers/nonsmooth/newton.ts: the sliding contacts' LCP by
 * Lemke, then Levenberg–Marquardt on the natural map), once a solve; where the polish ends
 * above IMPACT_SOLVE's tolerance the sweeps go on from its iterate (never worse than
 * theirs) to IMPACT_SOLVE's bound, so a stall the polish cannot end costs what it did.
 * Replayed on the 871 Moreau-law problems of bench/impacts.ts' 6-link chain (e = 0, μ = ½,
 * h = 1/240 s, 20 s), the same problems each way: sweeps 1.143e7 → 8.78e6 (and 2228
 * Newton steps), solves stopped at 1e5 sweeps 110 → 83, residual p99 5.3e-9 → 5.2e-10
 * m/s, largest 3.1e-8 → 1.1e-8 m/s; at h = 1/100 s (1102 problems) 1.90e7 → 1.44e7 sweeps
 * (6740 Newton steps), 59 → 30 at 1e5, p99 2.5e-9 → 6.1e-10 m/s, 3.0e-8 → 8.8e-9 m/s. Most stalls the polish ends are all-sliding (the LCP's
 * exact active set: a link's load moved from two corners to the other two, which the
 * sweeps do at 3e-5 N s per 1e4 sweeps); those it leaves have a sticking contact.
 */
const IMPACT_WINDOW = 1000;
const IMPACT_FIRST = { ...IMPACT_SOLVE, maxIterations: IMPACT_WINDOW } as const;
const IMPACT_NEXT = { ...IMPACT_FIRST, warmStart: true } as const;
/** Newton steps of the polish at most (solveImpact). */
const IMPACT_NEWTON = 20;
/**
 * The residual (residual.ts' "coulomb", m/s), as a fraction of the impact's speed ‖q‖∞ (its
 * largest free local velocity, m/s, restitution folded in), up to which a frictional
 * impact's Gauss–Seidel stopped at its bound has met its law all the same: the sweeps
 * stalled short of 1e-13 m/s, the law not jammed (file comment, friction). A stall: where
 * the impact's Delassus matrix is rank-deficient (bench/impacts.ts' 6-link chain, its links
 * lying flat: 21 rows of rank 12) the sweeps creep along its null space (5.0e-8 m/s after
 * 1e5 sweeps, 6.0e-8 after 1e4, 2.2e-7 after 1e3); on that chain (μ = ½, 5 s; e = 0 and ½,
 * h = 1/240 and 1/100 s) every solve stopped at the bound ended at 4e-13 to 2.6e-6 ‖q‖∞
 * (5.4e-8 m/s at most). A jam (a law without a solution) leaves a residual of the
 * impact's own speed: the jammed bob of impact-friction.test.ts 3.63 m/s at ‖q‖∞ 3.63 m/s.
 */
const IMPACT_STALL = 1e-4;
/** The kinetic energy's relative rounding above which an impact made energy (impact). */
const ENERGY_ROUNDING = 1e-12;
/** Normal speed (m/s) below which a contact does not approach. */
const V_EPS = 1e-6;
/**
 * The turn (rad) within a step up to which a body's contacts with restitution are active
 * once they close within the step, for impact-location.ts (NonsmoothContact.locatedTurn);
 * above it they keep Siconos' γ = ½. (Until 2026-12-07 also the turn below which a body's
 * contacts were left to the location, not events: turning.)
 */
export const TURN = 1e-3;
/**
 * How a scheme's velocities lag its positions (ImpactEvents `lags`): not at all (θ < 1, the
 * θ-scheme's positions x_t + h((1 − θ) v_t + θ v_{t+h}) exact under a constant force at
 * θ = ½ with the velocities in time), by half the last sub-step, restaggered by the
 * integrator (symplectic Euler with joints), or by half the step (θ = 1 otherwise).
 */
export type Lag = 0 | 1 | 2;
export const NO_LAG = 0;
export const SUBSTEP_LAG = 1;
export const STEP_LAG = 2;
/** ImpactEvents.eventKind's answers. */
const NOT_EVENT = 0;
const JOINTED = 1;
/** Unjointed bodies', one of which turns or whose pair has friction (eventKind). */
const FREE = 2;
/**
 * The factor on the pull a limit last showed (or the memory's mean acceleration along it)
 * within which `next` takes its pull for bounded without evaluating it (ImpactEvents.far).
 */
const PULL_SAFETY = 4;
/**
 * The relative margin on the energy budget B within which a bound still counts as in a
 * servo's reach (ImpactEvents.outOfReach): B is the exact motion's, and a piece's own
 * motion may hold a little more (the scheme's energy error within it, the joints'
 * projection); a bound that close to the ring's amplitude is chased as before.
 */
const REACH_MARGIN = 1e-6;

/** Whether effector e is a position servo (the energy budget's: ImpactEvents.reachBudget). */
function positionServo(e: ForceEffector): e is JointActuator {
  return e instanceof JointActuator && e.type === "position";
}

/**
 * The time τ (s) at which a gap g (m, rad) closing at u < 0 (or leaving at u > 0, pulled
 * back by a_n < 0) under a constant acceleration a_n closes: the first root of g + u τ + ½ a_n τ² = 0, τ = 2 g / (−u + √(u² − 2 a_n g))
 * (negative for a gap already passed); NaN when it never closes (pushed away first).
 */
function closingTime(g: number, u: number, an: number): number {
  const D = u * u - 2 * an * g;
  if (!(D >= 0)) return Number.NaN;
  // (leaving, u > 0, pulled back, a_n < 0: the return, the positive root (u + √D)/(−a_n),
  // in the form that does not cancel at g → 0, where 2 g/(√D − u) is 0/0)
  return u > 0 ? (u + Math.sqrt(D)) / -an : (2 * g) / (Math.sqrt(D) - u);
}

/**
 * The time τ (s) of a piece towards a bound's gap g closing at u under the pull a_n, with r
 * of the step left (file comment, inelastic bounds and approached bounds): leaving it
 * (u > 0), pulled back, its apex u/(−a_n) where the return comes within r and the apex
 * lies beyond ACTIVATION_TOLERANCE, else the return (closingTime's); otherwise, where the pull is towards the bound (or none), closingTime's
 * to the gap less g·min(½, g²), short of the scheme's own turn past the exact motion's;
 * where it decelerates the approach (a_n > 0), the constant-rate time g/|u|, which
 * comes before the arrival while the joint decelerates, where the quadratic, its
 * deceleration held, comes after it when that falls as the joint slows (a servo's damping):
 * the pieces end short of the bound, by ½ a_n τ², and never past it. A near miss (the
 * quadratic's closest approach, g + ½ u s* at s* = −u/a_n, within half of g) is taken again
 * from there at the latest. NaN when the quadratic neither closes nor nearly does.
 */
function boundClosing(g: number, u: number, an: number, r: number): number {
  if (u > V_EPS) {
    const back = closingTime(g, u, an);
    // (a flight within the activation band keeps its return: its apexes would be chased)
    return back < r && g + (0.5 * u * u) / -an > ACTIVATION_TOLERANCE ? u / -an : back;
  }
  if (!(an > 0) || !(u < -V_EPS)) return closingTime(g * (1 - Math.min(0.5, g * g)), u, an);
  const tau = closingTime(g, u, an);
  const early = g / -u;
  if (!Number.isNaN(tau)) return early;
  const s = -u / an;
  return g + 0.5 * u * s < 0.5 * g ? Math.min(s, early) : Number.NaN;
}

/**
 * Whether a joint leaving a bound (gap g > 0, rad or m, at the rate u > V_EPS away from it)
 * under the pull a_n < 0 towards it stays away from it for the time r left, where the pull
 * falls with the rate: its rate-dependent part d = a_n(q̇ = 0) − a_n(q̇ = u) > 0 read as a
 * linear damper, a_n(q̇) = a₀ − γ q̇ with γ = d/u (1/s) and a₀ = a_n + d (file comment, a
 * damper). Under q̈ = a₀ − γ q̇, a₀ held: with a₀ ≥ 0 the rate never turns (q̈ ≥ 0 at q̇ = 0);
 * with a₀ < 0 the return's rate never exceeds the terminal |a₀|/γ, so the gap, which the
 * flight only widens, takes at least g γ/|a₀| to close. No damping (d ≤ 0): false, the
 * constant pull's quadratic (boundClosing) as before.
 */
function dampedAway(g: number, u: number, an: number, d: number, r: number): boolean {
  const gamma = d / u;
  if (!(gamma > 0)) return false;
  const a0 = an + d;
  return a0 >= 0 || g * gamma >= -a0 * r;
}

/**
 * Whether a bound at the gap g (rad, m), the joint's rate towards it u (< 0 approaching),
 * lies beyond the reach of the time r left, |u| r + ½ A r², under a pull of at most A (NaN:
 * unknown, never far). `next` evaluates the pull (a force evaluation and a column, its
 * cost a step of a model with limits) only for the bounds not far under PULL_SAFETY times
 * the pull the limit last showed or the memory's mean acceleration along it, whichever is
 * larger: a command or load an input changes invalidates the former (forget). A time
 * function's command or load (ForceEffector.timeDependent) may grow beyond that within the
 * step, which neither knows: with one, the pull at the end of the time left, the state
 * held (a force evaluation a `next` and a column a limit), joins them, and the prediction
 * takes the larger pull towards the bound of the two ends (its pieces then end short of
 * the arrival, never past it). Without it, a rod coasting at 5 rad/s onto a bound at
 * e = 0.9 that a torque ramp starting within the step (c (t − t₁), c = 3e4 N·m/s, 0 to 450
 * rad/s² on the coordinate) takes it to ran 1.1e-3 rad past and met its impact at the next
 * step's start (its rate there 2.2 % of e u_b off the closed form; now 0.4 %, no passage:
 * test/engine/integrators/limit-impacts.test.ts).
 */
function far(g: number, u: number, A: number, r: number): boolean {
  return g > Math.max(0, -u) * r + 0.5 * A * r * r;
}

/**
 * The integrator's step from t of h, its figures into (or summed into) stats; its sub-steps.
 * `lead` (s): the length of the step whose lead its unresolved servos take (the piece's own
 * when left out; ImpactEvents.advance, the ring's end).
 */
export type StepFrom = (t: number, h: number, stats: StepStats, lead?: number) => number;

export class ImpactEvents {
  /** The impacts resolved in the running step (stats.impacts). */
  private impacts = 0;
  /** Whether the running step met more than it resolves (file comment; stats.impactsResolved). */
  private exhausted = false;
  /**
   * The largest residual (m/s) of the running step's impacts whose last law's solve did not
   * converge, 0 where all did (impact; stats.contactConverged, contactResidual).
   */
  private unsolved = 0;
  /** The last solveImpact's residual (m/s). */
  private residual = 0;
  /** The contacts' normal velocities, times to impact, and the impact's selection. */
  private u: Float64Array = new Float64Array(0);
  private take: Uint8Array = new Uint8Array(0);
  /** The taken contacts' indices, Delassus matrix, q, impulses and responses x_j. */
  private rows: Int32Array = new Int32Array(0);
  private D: Float64Array = new Float64Array(0);
  private q: Float64Array = new Float64Array(0);
  private P: Float64Array = new Float64Array(0);
  private X: Float64Array = new Float64Array(0);
  private readonly f: Float64Array;
  private readonly v: Float64Array;
  /** The velocities before a frictional impact (its second law: impact). */
  private readonly vBefore: Float64Array;
  /** STEP_LAG: ü at the state a restagger or an impact moves the velocities from. */
  private readonly stateAcceleration: Float64Array;
  /** The lagging velocities `synchronize` put aside (nextInTime restores them). */
  private readonly vLagged: Float64Array;
  private readonly col: Float64Array;
  /** The impact's LCP (its arrays set at each impact). */
  private readonly lcp: NonsmoothProblem = {
    contacts: 0,
    contactDim: 1,
    W: new Float64Array(0),
    q: new Float64Array(0),
  };
  private readonly rowRates: Float64Array;
  /** 1 for each limit bound (2 i + [upper]) `next` takes for an impact now. */
  private readonly takeBound: Uint8Array;
  /** The applied forces at the impact (boundRestitution). */
  private readonly force: Float64Array;
  /** The applied forces at the end of the time left, the state held (coordinatePull). */
  private readonly forceEnd: Float64Array;
  /** The applied forces at the coordinate's rate 0 and the velocities put aside (pullAtRest). */
  private readonly forceRest: Float64Array;
  private readonly vRest: Float64Array;
  /**
   * Each limit's |pull| (rad/s², m/s²) when `next` last evaluated it; NaN: unknown, or
   * stale (forget: an input changed the forces, or the state was set).
   */
  private readonly pullSeen: Float64Array;
  /** The impact's joint impulse per unit P_j of each taken contact (k × rows; impact). */
  private L: Float64Array = new Float64Array(0);
  /** Whether the running step is split (advance): its totals kept (substepDone). */
  private split = false;
  /** The split step's joint impulse so far, Σ h_i λ_i + Σ impacts' λ (N s, N m s). */
  private readonly jointImpulse: Float64Array;
  /** Its limits' impulses so far, Σ h_i × effort_i per limit (N s, N m s). */
  private readonly limitImpulse: Float64Array;
  private readonly lemke = new LemkeSolver();
  /** With friction: the impact's Coulomb problem (solveImpact) and its μ a row. */
  private readonly pgs = new PgsSolver();
  private readonly newton = new CoulombNewton();
  private mu: Float64Array = new Float64Array(0);
  /**
   * Per group root (impulseGroup), 1 for the bodies the impact reaches (the touching
   * contacts' closure through the joints: closeTouching).
   */
  private readonly reached: Uint8Array;
  /** The joints' groups (AccelerationStepper.constraintGroups), which an impulse reaches whole. */
  private readonly impulseGroup: Int32Array;
  /** The contacts touching (gap ≤ ACTIVATION_TOLERANCE) each body at `next`, up to 255. */
  private readonly touching: Uint8Array;
  /** 1 for the bodies whose contacts may be events (mayHaveEvents). */
  private readonly eventful: Uint8Array;
  /**
   * 1 for the bodies with a contact within the reach of the time left at the last `next`
   * (its index set's): those whose turn its prediction of the next piece assumes
   * (moreau-jean.ts, holdTrapezoidTurns).
   */
  readonly nearContact: Uint8Array;
  /** Whether their contacts are out of reach without a detection (mayHaveEvents), or null. */
  private readonly clearance: ContactClearance | null;
  /**
   * Whether a pair of bodies (−1 the world) may have event contacts, for the clearance: a
   * jointed body at one end (any restitution) or a pair restitution e > 0 (eventKind).
   */
  private readonly eventPair: (a: number, b: number) => boolean;
  /** Whether a body is jointed (`jointed`): its contacts are events at any restitution. */
  private readonly anyJointed: boolean;
  /**
   * Each body's bounds (mayHaveEvents, slowPairs) on its centre's acceleration (m/s²) and
   * its angular acceleration (rad/s²): the applied forces' with the joints held (contactPull's
   * P M⁻¹ f) and the memory's mean acceleration; 0 for a static body.
   */
  private readonly pullLinear: Float64Array;
  private readonly pullAngular: Float64Array;
  private readonly memoryLinear: Float64Array;
  private readonly memoryAngular: Float64Array;
  /** The clearance's slow pairs' test (mayHaveEvents): its time s (s) and memory's validity. */
  private readonly slowPairs: SlowPairs;
  private slowSpan = 0;
  private slowMemory = false;

  private readonly sys: BodySystem;
  /** The joints and motors (null: none). */
  private readonly constraints: ConstraintSet | null;

  constructor(
    /** The integrator's stepper: the system, the joints, removedEnergy. */
    private readonly stepper: AccelerationStepper,
    /** The nonsmooth contacts, or null: none (the joint limits' impacts alone). */
    private readonly contact: NonsmoothContact | null,
    /** 1 for a body a joint, motor or joint limit holds (moreau-jean.ts jointedBodies). */
    private readonly jointed: Uint8Array,
    /**
     * 1 for a body all of whose shapes are spheres centred on its origin (moreau-jean.ts
     * roundBodies): its slow turns make no event (turning).
     */
    private readonly round: Uint8Array,
    /** The integrator's memory: the last step's mean acceleration (file comment, 1). */
    private readonly memory: IntegratorMemory,
    /** The joint limits (their efforts summed over a split step), or null: none. */
    private readonly limits: JointLimitProblem | null = null,
    /**
     * How the smooth steps' velocities lag their positions (`lag`): NO_LAG (θ < 1); SUBSTEP_LAG,
     * half their last sub-step, which the integrator's sub-steps restagger themselves
     * (symplectic Euler with joints, the leapfrog's: theta-scheme.ts restagger); STEP_LAG,
     * half the step, the pieces of a split step restaggered here (the other θ = 1 schemes:
     * backward Euler, symplectic Euler without joints; advance).
     */
    private readonly lags: Lag = NO_LAG,
    /**
     * STEP_LAG: out ← ü at the current state at t, the acceleration consistent with the
     * joints (ThetaScheme.consistentAcceleration; restaggerPieces, impactInTime).
     */
    private readonly consistentAcceleration: ((t: number, out: Float64Array) => void) | null = null,
  ) {
    const sys = stepper.sys;
    this.sys = sys;
    this.constraints = stepper.constraints;
    this.f = new Float64Array(sys.numDofs);
    this.v = new Float64Array(sys.numDofs);
    this.vBefore = new Float64Array(sys.numDofs);
    this.vLagged = new Float64Array(sys.numDofs);
    this.stateAcceleration = new Float64Array(lags === STEP_LAG ? sys.numDofs : 0);
    this.col = new Float64Array(sys.numDofs);
    this.rowRates = new Float64Array(stepper.constraints?.numRows ?? 0);
    this.jointImpulse = new Float64Array(this.rowRates.length);
    this.limitImpulse = new Float64Array(limits?.limits.length ?? 0);
    this.takeBound = new Uint8Array(2 * (limits?.limits.length ?? 0));
    this.force = new Float64Array(sys.numDofs);
    this.forceEnd = new Float64Array(sys.numDofs);
    this.forceRest = new Float64Array(sys.numDofs);
    this.vRest = new Float64Array(sys.numDofs);
    this.reached = new Uint8Array(sys.numBodies);
    this.impulseGroup = new Int32Array(sys.numBodies);
    this.touching = new Uint8Array(sys.numBodies);
    this.group = new Int32Array(sys.numBodies);
    this.groupRate = new Float64Array(sys.numBodies);
    this.eventful = new Uint8Array(sys.numBodies);
    this.nearContact = new Uint8Array(sys.numBodies);
    this.clearance = contact !== null ? new ContactClearance(sys, contact.detector) : null;
    this.eventPair = (a, b) =>
      (a >= 0 && jointed[a] === 1) ||
      (b >= 0 && jointed[b] === 1) ||
      (contact as NonsmoothContact).params.restitutionOf(a, b) > 0;
    this.anyJointed = jointed.includes(1);
    this.pullLinear = new Float64Array(sys.numBodies);
    this.pullAngular = new Float64Array(sys.numBodies);
    this.memoryLinear = new Float64Array(sys.numBodies);
    this.memoryAngular = new Float64Array(sys.numBodies);
    this.slowPairs = {
      rate: V_EPS,
      pass: (b, c, G, open, tb, tc) => this.quiet(b, c, G, open, tb, tc),
    };
    this.pullSeen = new Float64Array(limits?.limits.length ?? 0).fill(Number.NaN);
    // (the energy budget's model: file comment, a servo's reach)
    const effectors = stepper.effectors;
    const servos = effectors.filter(positionServo);
    this.servoOf = (limits?.limits ?? []).map(
      (l) => servos.find((a) => a.coordinate === l.coordinate) ?? null,
    );
    this.budgeted =
      contact === null &&
      !(stepper.constraints?.timeDependent ?? false) &&
      this.servoOf.some((a) => a !== null) &&
      effectors.every(
        (e) =>
          e instanceof GravityEffector ||
          e instanceof GyroscopicEffector ||
          e instanceof CompliantJointLimit ||
          positionServo(e),
      );
  }

  /** Per limit, a position servo on its coordinate, or null (outOfReach). */
  private readonly servoOf: (JointActuator | null)[];
  /**
   * Whether the model is the energy budget's (file comment, a servo's reach): no contacts,
   * no motor, its effectors gravity, the gyroscopic term, the compliant limits and position
   * servos, one of them on a limit's coordinate (reachBudget checks the rest at each `next`).
   */
  private readonly budgeted: boolean;

  /**
   * The energy budget B = T + Σ_j Φ_j (J) at t and the current state, the kinetic energy and
   * the position servos' potentials (JointActuator.storedEnergy), which the exact motion
   * never exceeds from t on (file comment, a servo's reach); NaN where that is not known:
   * not `budgeted`, gravity, a servo's target a time function, a compliant limit's law on.
   */
  private reachBudget(t: number): number {
    if (!this.budgeted) return Number.NaN;
    let budget = kineticEnergy(this.sys);
    const effectors = this.stepper.effectors;
    for (let k = 0; k < effectors.length; k++) {
      const e = effectors[k];
      if (e instanceof JointActuator) {
        if (e.timeDependent) return Number.NaN;
        budget += e.storedEnergy(t);
      } else if (e instanceof GravityEffector) {
        if (e.g[0] !== 0 || e.g[1] !== 0 || e.g[2] !== 0) return Number.NaN;
      } else if (e instanceof CompliantJointLimit && e.enabled) return Number.NaN;
    }
    return budget;
  }

  /**
   * Whether limit i's bound at b (rad, m) lies out of its servo's reach under the energy
   * budget B (reachBudget): Φ(b − q*) > B (1 + REACH_MARGIN), Φ the servo's potential.
   */
  private outOfReach(i: number, b: number, t: number, budget: number): boolean {
    const servo = this.servoOf[i];
    return servo !== null && servo.storedEnergyAt(b, t) > budget * (1 + REACH_MARGIN);
  }

  /**
   * Forgets the pulls the limits showed (an input changed the applied forces, or the state
   * was set from outside): the next `next` evaluates them (far).
   */
  forget(): void {
    this.pullSeen.fill(Number.NaN);
  }

  /**
   * The step from t of h: `whole` when no event contact closes within it, else split at
   * each impact (file comment), `part` taking the pieces between and summing their
   * figures into `stats` (zeroed first). Returns the sub-steps.
   */
  advance(
    t: number,
    h: number,
    stats: StepStats,
    whole: StepFrom,
    part: StepFrom,
    observer: SubstepObserver | null,
  ): number {
    this.impacts = 0;
    this.exhausted = false;
    this.unsolved = 0;
    this.split = false;
    // (the pose set since the last step: the joints' factor forgotten, jointsFactoredAt)
    this.factoredAt = Number.NaN;
    const nsc = this.contact;
    nsc?.endSplit();
    // (no pair with restitution, no contact of a jointed body and no bound: no impact to
    // resolve, and no detection of its own)
    if (
      !(nsc?.params.anyRestitution() ?? false) &&
      !(nsc !== null && this.anyJointed) &&
      (this.limits?.limits.length ?? 0) === 0
    )
      return whole(t, h, stats);
    // (STEP_LAG: the step before kicked a whole step, the run's start none)
    this.pieceLag = this.memory.started && this.memory.previousValid ? 0.5 * h : Number.NaN;
    let tau = this.nextInTime(t, h, h);
    if (tau >= h) {
      this.openToEnd();
      const substeps = whole(t, h, stats);
      this.clearDeferred();
      return substeps;
    }
    resetStepStats(stats);
    // (STEP_LAG: an impact now at the step's start is a contact or bound the step before
    // left touching, not one it flew onto: nothing restaggered, pieceLag)
    if (tau <= 0) this.pieceLag = Number.NaN;
    // the step's totals from here on (substepDone, impact)
    this.split = true;
    // (STEP_LAG: each piece restaggered to its own half, `piece`; nextInTime read the lag)
    const pieceStep = (at: number, length: number): number => {
      this.restaggerPieces(at, 0.5 * length);
      const substeps = part(at, length, stats);
      // (the piece moved the pose: jointsFactoredAt)
      this.factoredAt = Number.NaN;
      // (a contact step's: the contacts' forces in its velocities, its lag unknown)
      if (!this.memory.previousValid) this.pieceLag = Number.NaN;
      return substeps;
    };
    this.jointImpulse.fill(0);
    this.limitImpulse.fill(0);
    nsc?.beginSplit(h);
    let done = 0;
    let substeps = 0;
    let pieces = 0;
    while (done < h) {
      const rest = h - done;
      if (tau <= 0) {
        this.impactInTime(t + done, h);
        this.impacts++;
        // the energy balance's next piece starts from the impact's velocities: a sub-step of
        // length 0 (its forces' work 0), as a sub-step's end becomes the next one's start
        observer?.substepDone(t + done, 0);
      } else {
        // (the last piece ends on the step's end exactly, as without events)
        const piece = Math.min(tau, rest);
        if (piece === rest) this.openToEnd();
        substeps += pieceStep(t + done, piece);
        this.clearDeferred();
        pieces++;
        done = piece === rest ? h : done + piece;
        if (done >= h) break;
      }
      if (this.impacts >= MAX_EVENTS || pieces >= MAX_PIECES) {
        // more impacts than a step resolves: the rest whole (file comment), after the ring's
        // end where servos no halving resolves drive it (file comment, the ring's end)
        const next = this.nextInTime(t + done, h - done, h);
        this.exhausted = next < h - done;
        if (this.exhausted && next > 0 && this.stepper.beginStepLeadAt(t + done, h)) {
          substeps += part(t + done, next, stats, h);
          this.factoredAt = Number.NaN;
          pieces++;
          done += next;
        }
        this.clearDeferred();
        // (the limits' bounds not touching left to the projection: JointLimitProblem.deferApart)
        this.limits?.deferApart();
        substeps += pieceStep(t + done, h - done);
        this.clearDeferred();
        break;
      }
      tau = this.nextInTime(t + done, h - done, h);
    }
    // (STEP_LAG: the next step's lag, half a step, as after a step not split)
    this.restaggerPieces(t + h, 0.5 * h);
    stats.impacts = this.impacts;
    stats.impactsResolved = !this.exhausted;
    // an impact whose law's solve stopped short, the fallback's too (impact): said, not silent
    if (this.unsolved > 0) {
      stats.contactConverged = false;
      stats.contactResidual = Math.max(stats.contactResidual, this.unsolved);
    }
    // the State's multipliers: the step's mean joint force, its impacts' impulses included
    const lambda = this.stepper.lambda;
    for (let r = 0; r < lambda.length; r++) lambda[r] = this.jointImpulse[r] / h;
    const limits = this.limits?.limits ?? [];
    for (let i = 0; i < limits.length; i++)
      limits[i].coordinate.limitEffort = this.limitImpulse[i] / h;
    this.split = false;
    return substeps;
  }

  /**
   * The lag s (s) of the velocities behind the positions, v = v(t − s) (`lags`), as `next`
   * reads it: symplectic Euler's with joints are the leapfrog's, s half the last sub-step
   * (memory.substepSize), where the memory holds the acceleration ü the next sub-step
   * restaggers them by (theta-scheme.ts restagger); the other θ = 1 schemes', pieceLag,
   * where the memory holds the last step's mean acceleration (lagAcceleration); 0
   * elsewhere, and after a step that left none.
   */
  private lag(): number {
    const m = this.memory;
    if (this.lags === SUBSTEP_LAG)
      return m.accelerationValid && m.previousValid ? 0.5 * m.substepSize : 0;
    return this.lags === STEP_LAG && m.previousValid && this.pieceLag > 0 ? this.pieceLag : 0;
  }

  /**
   * The acceleration `next` reads the lag with (nextInTime): ü consistent with the joints,
   * the memory's (SUBSTEP_LAG), or the last step's mean acceleration (STEP_LAG: backward
   * Euler keeps no ü, and `next` aims with that one already; under a constant force the
   * two are the same, the flight's g). Only an aim: the velocities move by ü made at the
   * state (restaggerPieces, impactInTime), the mean of a piece of 4e-12 s being its joint
   * projection's 3e-5 m/s over it (7e6 m/s², a tilted welded pair's first landing).
   */
  private get lagAcceleration(): Float64Array {
    const m = this.memory;
    return this.lags === SUBSTEP_LAG ? m.acceleration : m.previousAcceleration;
  }

  /**
   * STEP_LAG: the velocities' lag within a split step (s): half the step at its start (the
   * step before kicked a whole step: x_{n+1} = x_n + h v_{n+1} is the exact drift of
   * v(t_n + h/2) under a constant force, v_{n+1} = v_n + h a then the velocity at
   * t_{n+1} − h/2), 0 after an impact (impactInTime), half its length after a piece. NaN,
   * nothing restaggered, from a contact step on (the step before or a piece: the memory
   * then keeps no mean acceleration, previousValid): the contacts' forces are in its
   * velocities, and a body resting on the floor, moved by the lag times ü (which holds no
   * contact force), met it at g h/2 every step (a welded pair at e = ½ hopped for ever,
   * 1.2e-2 m/s, 1.4e-4 m deep). So too in a step that starts with an impact now: the step
   * before ended on it, held there by the projection (a slider pushed onto a joint limit's
   * bound, its smooth steps' mean the push's a, read a h/2 = 0.0125 m/s at rest,
   * test/engine/actuators/loads-limits.test.ts).
   */
  private pieceLag = 0;

  /**
   * STEP_LAG: the velocities restaggered to lag by `to` (s), v += (pieceLag − to) ü (ü made
   * at the state: kick), the variable-step leapfrog's kick (theta-scheme.ts restagger):
   * before each piece of length τ to τ/2, whose kick of τ and drift on the velocity then
   * follow the exact motion under a constant force (after an impact, lag 0, a half kick),
   * and at the split step's end back to half the step, as the next whole step takes it.
   * A piece of τ kicked whole from a lag s left its positions τ (s − τ/2) a off the exact
   * motion: a welded pair dropped 0.4 m at e = 1 (5 ms), its pieces aimed with the lagging
   * velocities read in time, overran the floor by up to 1.1e-4 m, and the projection's lift
   * of three of its corners tilted it 2.1e-5 rad, from which its next landing, at e = 1,
   * set it tumbling at 7.7 rad/s (test/engine/integrators/leapfrog-bounce.test.ts).
   */
  private restaggerPieces(t: number, to: number): void {
    if (this.lags !== STEP_LAG) return;
    if (Number.isNaN(this.pieceLag)) return;
    const kick = this.pieceLag - to;
    this.pieceLag = to;
    if (kick !== 0) this.kick(t, kick);
  }

  /**
   * STEP_LAG: v += s ü, ü made at the state at t (stateAcceleration). Not where a servo is
   * unresolved over |s| (AccelerationStepper.unresolvedAt): its damping's share of ü,
   * −(k_d/Ĩ) q̇, kicked explicitly reversed the rate (a hinged rod whose k_d a `gains` input
   * raised to 1e6 mid-swing, h = 1 ms: its rate reversed, energy.error 3.6e5 J at that step;
   * test/engine/integrators/theta-servo-lag.test.ts); the velocities are left as they are,
   * nothing restaggered from then on in the step (pieceLag NaN, as after a contact step).
   */
  private kick(t: number, s: number): void {
    if (this.stepper.unresolvedAt(t, Math.abs(s))) {
      this.pieceLag = Number.NaN;
      return;
    }
    const { sys, v, stateAcceleration: a } = this;
    (this.consistentAcceleration as (t: number, out: Float64Array) => void)(t, a);
    getVelocity(sys, v);
    for (let i = 0; i < v.length; i++) v[i] += s * a[i];
    setVelocity(sys, v);
  }

  /**
   * The velocities at the positions' time, v(t) = v + s ü (lag s > 0; the lagging ones put
   * aside in vLagged), so that the closing times and Newton's law read the velocities at
   * the instant. Taken lagging, a welded pair (4 kg) dropped 0.4 m onto a floor
   * at e = ½ under symplectic Euler, h = 5 ms, was met 7.6e-5 m = s τ g past it (τ = 3.1 ms
   * its piece) and rebounded at e times the velocity s g = 0.015 m/s short of its arrival's,
   * test/engine/integrators/welded-drop.test.ts.
   */
  private synchronize(s: number): void {
    const { sys, vLagged: v } = this;
    getVelocity(sys, v);
    const a = this.lagAcceleration;
    const out = this.col;
    for (let i = 0; i < v.length; i++) out[i] = v[i] + s * a[i];
    setVelocity(sys, out);
  }

  /** `next` on the velocities at the positions' time (synchronize), the lagging ones kept. */
  private nextInTime(t: number, r: number, h: number): number {
    const s = this.lag();
    if (s === 0) return this.next(t, r, h);
    this.synchronize(s);
    try {
      return this.next(t, r, h);
    } finally {
      setVelocity(this.sys, this.vLagged);
    }
  }

  /**
   * The impact on the velocities at its instant (synchronize), left there: the leapfrog
   * restarts from them as at a run's start, the length of the sub-step before forgotten
   * (memory.substepSize 0: the next sub-step kicks from them whole, no restagger), as
   * after a contact step. Kept lagging instead (the jump added to the lagging velocities),
   * a slider pushed onto a bound (e = 0.8, 5 ms) at rest there read at −s a = 3.75e-3 m/s
   * a step for ever, its pieces smooth steps moving it off the bound each step
   * (test/engine/actuators/loads-limits.test.ts). Its booked loss is the kinetic energy's
   * change at the instant, the impact's own (0 at e = 1); the lag's energy offset
   * −s vᵀM ü the lagging velocities held leaves energy.error. STEP_LAG: moved by ü made
   * at the instant (kick), pieceLag then 0, the next piece's restagger a half kick.
   */
  private impactInTime(t: number, h: number): void {
    if (this.lags === STEP_LAG) {
      if (this.pieceLag > 0) this.kick(t, this.pieceLag);
      if (!Number.isNaN(this.pieceLag)) this.pieceLag = 0;
    } else {
      const s = this.lag();
      if (s > 0) {
        this.synchronize(s);
        this.memory.substepSize = 0;
        this.memory.velocitiesInTime = true;
      }
    }
    this.impact(t, h);
  }

  /** Whether the running step is split at its impacts (substepDone then wanted). */
  get splitting(): boolean {
    return this.split;
  }

  /**
   * An accepted sub-step of h of a split step (MoreauJeanIntegrator.stepOrHalve, each
   * piece's sub-steps): its joints' impulse Λ (N s, N m s per row; MoreauJeanIntegrator
   * .jointImpulse), its limits' (h × the effort its saveMemory reported) and its
   * contacts' impulses into the step's totals.
   */
  substepDone(h: number, impulse: Float64Array): void {
    for (let r = 0; r < impulse.length; r++) this.jointImpulse[r] += impulse[r];
    const limits = this.limits?.limits ?? [];
    for (let i = 0; i < limits.length; i++)
      this.limitImpulse[i] += h * limits[i].coordinate.limitEffort;
    this.contact?.keepSubstep();
  }

  /**
   * At t, with r of the step of h left: 0 when an event contact or limit bound meets its
   * impact now (the impact's contacts marked in `take`, its bounds in `takeBound`), the
   * earliest τ < r of one closing later, or Infinity when none closes within r or the
   * impact touches a fem–fem contact.
   */
  private next(t: number, r: number, h: number): number {
    const nsc = this.contact;
    this.clearDeferred();
    this.missCount = 0;
    this.forcesAt = Number.NaN;
    this.forcesEndAt = Number.NaN;
    this.ratesNow = false;
    const prev = this.memory.previousValid ? this.memory.previousAcceleration : null;
    let earliest = Number.POSITIVE_INFINITY;
    let now = false;
    let m = 0;
    this.nearContact.fill(0);
    if (nsc !== null && this.mayHaveEvents(t, r, h)) {
      const set = nsc.set;
      m = this.detect(r);
      // the bodies another contact touches now, whose pull alone does not tell their motion
      const touching = this.touching;
      touching.fill(0);
      for (let i = 0; i < m; i++)
        if (set.gap[i] <= ACTIVATION_TOLERANCE) {
          // (counted, to 255: a leaving contact within the band is not its own support)
          const a = set.bodyA[i];
          const b = set.bodyB[i];
          if (a >= 0 && touching[a] < 255) touching[a]++;
          if (b >= 0 && touching[b] < 255) touching[b]++;
        }
      for (let i = 0; i < m; i++) {
        const un = this.u[i];
        const kind = this.eventKind(set, i, h);
        if (kind === NOT_EVENT) continue;
        const g = set.gap[i];
        // Not approaching, a contact open beyond the activation band closes within the
        // step where the applied forces pull it in (the bounds' "from rest", file comment):
        // a servo driving a hinged bob from rest at 1e-5 m over the floor ran the step
        // 1.8e-4 m into it, the impact met at the next step's start and the penetration left
        // to the contact's correction (still 1e-7 m after 10 s); a box turning at 1e-5 rad/s
        // (an event body) let go 1e-5 m over the floor ran 1.1e-4 m into it, its arrival at
        // e = 1 met there and lost, 1.2e-3 J (test/engine/integrators/impact-pull.test.ts).
        // Where another contact of its bodies touches, that one's support, which the pull
        // leaves out, may hold it open (a box's corner over the floor while its others rest
        // on it: each piece would end short again), so the memory's mean acceleration along
        // it, which holds the contacts' forces, must pull it in too (the weaker of the two
        // taken); without a memory (a run's start, after an impulsive step) the pull alone: a
        // box tilted by 1e-5 rad on its edge ran its other edge 1.5e-4 m into the floor in
        // its first step, 8.1e-4 J lost where it falls by 1.5e-5 J. Not where it rests within
        // the band: the step's own Newton law holds it. But one leaving within the band
        // (u_n > V_EPS) is that law's only where the activation of the time left takes it,
        // g + γ r u_n ≤ ε_act (γ = ACTIVATION_GAMMA: NonsmoothContact.updateIndexSet);
        // beyond, the step lets it fly, and a pull that turns it around within the step (a
        // servo pressing a bob onto the floor, the bob leaving at u_n: back within
        // 2 u_n/|a_n|, sooner as the spring's pull grows with the lift) ran it through the
        // surface: the bob of impact-pull.test.ts on a servo at k_p = 1e4, leaving at
        // 0.1 m/s, ended its first 10 ms step 1.9e-4 m into the floor, 1.9e-3 J booked to
        // energy.error. It is timed at its return as one open beyond the band is
        // (closingTime's root for u > 0), never met now (leaving, Newton's law has nothing
        // to do: a rebound is met at its return, as a bound's), and its own touching is not
        // its support.
        const leaving = un > V_EPS;
        const fromRest =
          !(un < -V_EPS) &&
          (g > ACTIVATION_TOLERANCE ||
            (leaving && g + ACTIVATION_GAMMA * r * un > ACTIVATION_TOLERANCE));
        if (!(un < -V_EPS) && !fromRest) continue;
        const self = g <= ACTIVATION_TOLERANCE ? 1 : 0;
        const supported =
          (set.bodyA[i] >= 0 && touching[set.bodyA[i]] > self) ||
          (set.bodyB[i] >= 0 && touching[set.bodyB[i]] > self);
        // (an unjointed body's: the pull of the forces now and the centripetal term, where
        // the memory's mean acceleration holds the last step's turn, or nothing after an
        // impulsive step, and a spinning corner was met up to 1e-4 m past the floor; a
        // jointed body's from rest the pull now, the joints held, as a bound's: the memory
        // knows nothing of a command switched since; jerk 0 else)
        this.jerk = 0;
        let an =
          kind === FREE
            ? this.contactPull(t, set, i) + this.centripetal(set, i)
            : fromRest
              ? this.contactPull(t, set, i)
              : prev === null
                ? 0
                : set.rowTimes(i, 0, prev);
        if (fromRest && supported && prev !== null) an = Math.max(an, set.rowTimes(i, 0, prev));
        // (from rest: neither approaching nor pulled in)
        if (fromRest && !(an < 0)) continue;
        let tau = closingTime(g, un, an);
        // (from rest, a jointed body's pull held over a τ within which a servo rings, τ λ > 1:
        // the ring turns the motion back before, file comment, 1)
        if (fromRest && kind === JOINTED && tau * this.servoRate(t, set, i, m) > 1) continue;
        // a turning side's gap has a third derivative the quadratic leaves out, of size at
        // most J = Σ |ω|³ |r| (centripetal): the piece is aimed short of the surface by
        // J τ³/6, so that it ends before it rather than past it (met past it, the impact
        // took the pose that far in: a planar box spun at 7 rad/s was met up to 1.9e-4 m
        // in, its rate 0.02 rad/s off the closed form's), the next piece closing the rest
        const miss = (this.jerk * tau * tau * tau) / 6;
        if (miss > 0 && miss < g) tau = closingTime(g - miss, un, an);
        // A turning side's contact that approaches but turns away before it closes (NaN),
        // or closes after r, is left out of the pieces up to the step's end too (misses):
        // the step's own activation, g + h u_n/2 ≤ 0 on the straight line, took such a near
        // miss of a spinning box's corner and gave it Newton's law, a rebound from a floor
        // it never reached (up to 7e-3 J a step of the box in long-run/tumbling-box.test.ts).
        if (this.jerk > 0 && !(tau < r) && g > NOW_GAP) {
          this.misses = grow(this.misses, this.missCount + 1);
          this.misses[this.missCount++] = set.key[i];
        }
        // (pushed away before it closes)
        if (Number.isNaN(tau)) continue;
        if (!leaving && (g <= NOW_GAP || tau <= NOW * h)) {
          this.take[i] = 1;
          now = true;
        } else {
          earliest = Math.min(earliest, tau);
          // open until τ: not active in the piece before it (file comment, 3)
          nsc.defer(set.key[i]);
        }
      }
    } else this.take.fill(0);
    // the bounds of the joint limits with restitution, as the contacts (their gap the
    // coordinate's distance to the bound, u its rate towards it, rad or m)
    const limits = this.limits;
    const takeBound = this.takeBound;
    takeBound.fill(0);
    const timed = limits !== null && this.timeDependent();
    // (the bounds out of their servos' reach are none of the step's: file comment, a
    // servo's reach)
    const budget = limits !== null ? this.reachBudget(t) : Number.NaN;
    if (limits !== null)
      for (let i = 0; i < limits.limits.length; i++) {
        const l = limits.limits[i];
        const q = l.coordinate;
        q.evaluate();
        // (the bound's pull, the coordinate's acceleration now: NaN until needed; its bound
        // without evaluating it, far; the pull at the rate 0, dampedAway)
        let pull = Number.NaN;
        let restPull = Number.NaN;
        // a time function's command or load: its pull at the end of the time left, the state
        // held, which neither the pull seen nor the memory knows of (far, file comment)
        const pullEnd = timed ? this.coordinatePull(t, q, t + r) : 0;
        const likely =
          PULL_SAFETY *
          Math.max(
            this.pullSeen[i],
            prev === null ? 0 : Math.abs(q.along(prev)),
            Math.abs(pullEnd),
          );
        for (let sigma = 1; sigma >= -1; sigma -= 2) {
          const un = sigma * q.rate;
          const g = sigma > 0 ? q.value - l.lower : l.upper - q.value;
          const approaching = un < -V_EPS;
          // resting on it: the step's own Newton law holds it (file comment, inelastic bounds)
          if (!approaching && !(un > V_EPS) && g <= ACTIVATION_TOLERANCE) continue;
          if (this.outOfReach(i, sigma > 0 ? l.lower : l.upper, t, budget)) continue;
          if (far(g, un, likely, r)) continue;
          if (Number.isNaN(pull)) {
            pull = this.coordinatePull(t, q);
            this.pullSeen[i] = Math.abs(pull);
          }
          // (with a time function, the larger pull towards the bound of the two ends: its
          // pieces then end short of the arrival, each the next one's start, never past)
          const an = Math.min(sigma * pull, timed ? sigma * pullEnd : Number.POSITIVE_INFINITY);
          // (neither approaching nor pulled towards it)
          if (!approaching && !(an < 0)) continue;
          const tau = boundClosing(g, un, an, r);
          if (Number.isNaN(tau)) continue;
          // (leaving it, its return within r read under the pull now held: a damper's pull,
          // which falls with the rate, may never bring it back, file comment, a damper)
          if (un > V_EPS && tau < r) {
            if (Number.isNaN(restPull)) restPull = this.pullAtRest(t, q);
            if (dampedAway(g, un, an, sigma * (restPull - pull), r)) continue;
          }
          // (a rebound leaving it is met at its return, never now)
          if (approaching && g <= NOW_GAP) {
            takeBound[2 * i + (sigma > 0 ? 0 : 1)] = 1;
            now = true;
          } else {
            earliest = Math.min(earliest, tau);
            limits.defer(i, sigma);
          }
        }
      }
    // the contacts of slow pairs unseen (mayHaveEvents, quiet): detected where the step is
    // split, for nearContact (the pieces' turns, moreau-jean.ts holdTrapezoidTurns) and, a
    // bound met now, for the impact, whose contacts touching its bodies take it too
    // (closeTouching), as from the detection above, which would have found none of them
    // approaching
    if (this.unseen && (now || this.split || earliest < r)) m = this.detect(r);
    if (now) this.clearDeferred();
    if (!now) return earliest < r ? earliest : Number.POSITIVE_INFINITY;
    return this.closeTouching(m) ? 0 : Number.POSITIVE_INFINITY;
  }

  /**
   * `next`'s detection at the current pose (γ = 1 over the time left r, widened by the
   * reach of the contacts' accelerations, closingReach), its normal velocities into `u`,
   * `take` cleared; the number of contacts.
   */
  private detect(r: number): number {
    const nsc = this.contact as NonsmoothContact;
    nsc.updateIndexSet(r, 1, this.closing);
    const { set } = nsc;
    const m = set.count;
    for (let i = 0; i < m; i++) {
      if (set.bodyA[i] >= 0) this.nearContact[set.bodyA[i]] = 1;
      if (set.bodyB[i] >= 0) this.nearContact[set.bodyB[i]] = 1;
    }
    this.u = grow(this.u, m);
    this.take = grow(this.take, m);
    set.normalVelocities(this.u, 0, m);
    this.take.fill(0);
    return m;
  }

  /** Whether groupRate holds the last `next`'s groups and rates (servoRate). */
  private ratesNow = false;
  /** Per body, its group (groupRoot) at the last `next` (servoRate). */
  private readonly group: Int32Array;
  /** Per group root, the fastest rate λ (1/s) of the servos on its joints (servoRate). */
  private readonly groupRate: Float64Array;

  /**
   * The fastest rate λ (1/s) of the servos that move contact i's bodies, at the current
   * state and t: the max over the joint actuators of the group of either body of
   * max(k_d/Ĩ, √(k_p/Ĩ)), 1/Ĩ with the joints held (heldInverseInertia: each servo's rate on
   * its coordinate as the mechanism moves it; the joints-free bound of
   * JointActuator.fastestRate took a hinged bob's 1/Ĩ as its own 1/I, 63 times the hinge's,
   * 8 times its rate: a servo at k_p = 1e3 pressing the bob on the floor, λ = 500 /s where
   * it rings at 63 /s, had its 5 ms return skipped, τ λ 2.5, and the step ran it 1.0e-4 m
   * into the floor); the groups those of the joints, the force elements
   * (AccelerationStepper.jointGroups) and the m contacts of `next`'s set, which may act
   * within the time left. Taken once a `next`. Why the group's servos only (file comment,
   * 1): the contact's normal acceleration, the joints held, is
   *     a_n = H_n P M⁻¹ f,   P = I − M⁻¹Gᵀ S⁻¹ G,  S = G M⁻¹ Gᵀ,
   * and H_n has entries on its two bodies' dofs only. M is block diagonal per body, and G's
   * rows each couple the bodies of one joint, so S, S⁻¹ and P M⁻¹ are block diagonal over
   * the groups of bodies joined by joints (the ground and fixed bodies have no dofs and
   * join nothing): a_n reads f on the dofs of its bodies' groups alone. A servo's effort
   * acts on its joint's two bodies, so a servo of another group puts nothing into those
   * dofs, now or later, unless some force carries its motion over: a force element
   * coupling bodies of both groups (hence the groups joined by W's off-diagonal blocks,
   * ForceEffector.addSolveBlocks) or a contact between them (hence joined by every contact
   * that may act within the time left, the index set of r; one that closes later is an
   * event, met at its instant, after which `next` groups again). So the motion of the
   * contact's bodies over the piece, and its closing, are what they would be in the model
   * of its groups alone, where 536e604's test, τ λ > 1 with λ the fastest servo of that
   * model, is the one made here: a servo elsewhere, however stiff, rings nothing of a_n.
   * (With λ the whole model's, a hinged bob that a servo drives into the floor from rest
   * beside a rod on a stiff servo of its own (k_p = 1e6, λ = 4.1e3 /s, τ λ 9.2) was run
   * 1.8e-4 m into the floor, as before d3b4a34: test/engine/integrators/impact-pull.test.ts.)
   */
  private servoRate(t: number, set: ContactSet, i: number, m: number): number {
    const { sys, group, groupRate } = this;
    if (!this.ratesNow) {
      this.stepper.jointGroups(group);
      for (let k = 0; k < m; k++) joinGroups(sys, group, set.bodyA[k], set.bodyB[k]);
      groupRate.fill(0);
      const effectors = this.stepper.effectors;
      for (let k = 0; k < effectors.length; k++) {
        const e = effectors[k];
        if (!(e instanceof JointActuator)) continue;
        // (its rate with the joints held, 1/Ĩ = gᵀ P M⁻¹ g: heldInverseInertia)
        const rate = e.rateAt(this.heldInverseInertia(t, e.coordinate));
        // (a joint's two ends are of one group; the ground's and a fixed body's none)
        const end = this.dynamic(e.coordinate.bodyA) ? e.coordinate.bodyA : e.coordinate.bodyB;
        if (!this.dynamic(end)) continue;
        const r = groupRoot(group, end);
        groupRate[r] = Math.max(groupRate[r], rate);
      }
      this.ratesNow = true;
    }
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    return Math.max(
      this.dynamic(a) ? groupRate[groupRoot(group, a)] : 0,
      this.dynamic(b) ? groupRate[groupRoot(group, b)] : 0,
    );
  }

  /**
   * 1/Ĩ = gᵀ P M⁻¹ g (1/(kg m²), 1/kg) of coordinate q at t, g its gradient, with the
   * joints factored at t (jointsFactoredAt): acceleration-step.ts heldInverseInertia, the
   * stepper's arithmetic at its step's start, at most the joints-free gᵀ M⁻¹ g of
   * JointActuator.fastestRate.
   */
  private heldInverseInertia(t: number, q: JointCoordinate): number {
    const { f } = this;
    f.fill(0);
    q.evaluateJacobian();
    q.spread(1, f);
    const ws = this.jointsFactoredAt(t);
    return heldInverseInertia(this.sys, ws, f, this.col, this.rowRates);
  }

  /** Whether b is a dynamic body (not the ground, −1, nor a fixed body). */
  private dynamic(b: number): boolean {
    return b >= 0 && this.sys.dofOffset[b] >= 0;
  }

  /** Opens every contact and bound `next` deferred. */
  private clearDeferred(): void {
    this.contact?.clearDeferred();
    this.limits?.clearDeferred();
  }

  /** The near misses of turning contacts the last `next` found, by key (`next`). */
  private misses: Float64Array = new Float64Array(0);
  private missCount = 0;

  /**
   * Opens every contact and bound `next` deferred but its near misses (`next`), for the
   * piece that ends the step.
   */
  private openToEnd(): void {
    this.clearDeferred();
    const nsc = this.contact;
    if (nsc !== null) for (let k = 0; k < this.missCount; k++) nsc.defer(this.misses[k]);
  }

  /**
   * Whether contact i of the detected set is an event contact (file comment, 1): JOINTED, a
   * jointed body at one end (any restitution), FREE, unjointed bodies whose pair has e > 0
   * and friction (friction) or one of which turns (turning: its lever arm turns within the
   * step of h, which impact-location.ts's closed form does not follow), or NOT_EVENT.
   */
  private eventKind(set: ContactSet, i: number, h: number): number {
    if (set.triangle[i] !== 0) return NOT_EVENT;
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    // (at any restitution, e = 0 too: file comment, inelastic contacts of jointed bodies)
    if ((a >= 0 && this.jointed[a] === 1) || (b >= 0 && this.jointed[b] === 1)) return JOINTED;
    if (!(set.restitution[i] > 0)) return NOT_EVENT;
    if (set.friction[i] > 0) return FREE;
    return this.turning(set, i, 0, h) || this.turning(set, i, 1, h) ? FREE : NOT_EVENT;
  }

  /**
   * Whether some contact may be an event contact (eventKind) within the time r left of the
   * step of h: one of a dynamic body a joint holds, of a rigid body whose points may turn
   * about its centre faster than V_EPS (|ω| ρ_b > V_EPS: turning; a round body turning
   * slowly, slowRound, has none), or, where a pair has friction and one restitution (some pair's
   * μ > 0 and some pair's e > 0: the model's, without looking at the pairs), of any dynamic
   * body; and of those bodies' event pairs (eventPair: a jointed body's at any
   * restitution, the others' at e > 0), one may enter the index set of r
   * (ContactClearance: none where their shapes lie beyond their reach over r, nor where
   * no point of theirs moves along the normal faster than V_EPS/2: `unseen`; the latter
   * only where `quiet` proves that `next`'s "from rest" timing finds none of their contacts
   * within r: passed on the speeds alone, a hinged bob at rest 1e-5 m over the floor that a
   * servo drives in was run 1.8e-4 m into the floor, test/engine/integrators/
   * impact-pull.test.ts; until this, only while the reach over r was within
   * ACTIVATION_TOLERANCE, never under gravity at these steps).
   * Else `next` detects no contacts of its own (a second detection a step beside the
   * step's: the step's own then makes it, bit for bit as after that detection,
   * test/engine/integrators/impact-events.test.ts; a 10 × 10 grid of spheres, half of them
   * bouncing at e = ½, detected twice a step, `next` about 13 % of its step's time). The
   * clearance spares a pendulum swinging above a floor its detection at each step but those
   * near the floor (impact-events.test.ts). (Bit for bit but for the broad phase's choice of
   * its sweep axis, made every 4 detections with hysteresis, broadphase.ts: fewer
   * detections move when it is made, and another axis orders the pairs, hence the contacts,
   * otherwise; none seen in the tests.)
   */
  private mayHaveEvents(t: number, r: number, h: number): boolean {
    const { sys, jointed, eventful } = this;
    const nsc = this.contact as NonsmoothContact;
    const frictional = nsc.params.anyFriction() && nsc.params.anyRestitution();
    const w = sys.omega;
    // (a point of body b moves about its centre at |ω| |r| ≤ |ω| ρ_b: turning's bound)
    const rho = (this.clearance as ContactClearance).rho;
    let any = false;
    for (let b = 0; b < sys.numBodies; b++) {
      eventful[b] = 0;
      if (sys.dofOffset[b] < 0) continue;
      const wx = w[3 * b];
      const wy = w[3 * b + 1];
      const wz = w[3 * b + 2];
      if (
        frictional ||
        (b < jointed.length && jointed[b] === 1) ||
        ((wx * wx + wy * wy + wz * wz) * rho[b] * rho[b] > V_EPS * V_EPS && !this.slowRound(b, h))
      ) {
        eventful[b] = 1;
        any = true;
      }
    }
    this.unseen = false;
    if (!any) return false;
    this.closing = this.closingReach(t, r);
    const clearance = this.clearance as ContactClearance;
    const available = nsc.faces === null && nsc.femNodes === null && clearance.available;
    if (available) this.accelerationBounds(t);
    this.slowSpan = Math.max(r, NOW * h);
    const clear =
      available && clearance.clear(eventful, r, this.closing, this.eventPair, this.slowPairs);
    this.unseen = clear && clearance.touching;
    return !clear;
  }

  /**
   * pullLinear/pullAngular and memoryLinear/memoryAngular at t (their comment): the norms of
   * each rigid body's parts of P M⁻¹ f (closingReach's M⁻¹ f in `col`, projected as
   * pullAlong's x, jointTangent: contactPull = H_n P M⁻¹ f, P M⁻¹ symmetric) and of the
   * memory's mean acceleration (none: memoryValid false, slowMemory).
   */
  private accelerationBounds(t: number): void {
    const { sys, col } = this;
    const ws = this.jointsFactoredAt(t);
    if (ws !== null) jointTangent(ws, col, this.rowRates);
    const prev = this.memory.previousValid ? this.memory.previousAcceleration : null;
    this.slowMemory = prev !== null;
    for (let b = 0; b < sys.numBodies; b++) {
      const o = sys.dofOffset[b];
      let pl = 0;
      let pa = 0;
      let ml = 0;
      let ma = 0;
      if (o >= 0) {
        pl = Math.hypot(col[o], col[o + 1], col[o + 2]);
        if (prev !== null) ml = Math.hypot(prev[o], prev[o + 1], prev[o + 2]);
        if (sys.kind[b] === BodyKind.RIGID) {
          pa = Math.hypot(col[o + 3], col[o + 4], col[o + 5]);
          if (prev !== null) ma = Math.hypot(prev[o + 3], prev[o + 4], prev[o + 5]);
        }
      }
      this.pullLinear[b] = pl;
      this.pullAngular[b] = pa;
      this.memoryLinear[b] = ml;
      this.memoryAngular[b] = ma;
    }
  }

  /**
   * Whether slow pair (b, c) (ContactClearance: each contact it may have in `next`'s index
   * set has gap g ≤ G, lever arms ≤ ρ + G, |u_n| < V_EPS/2) may go undetected: its contacts
   * then provably do nothing in `next`, whose detection would take them as follows.
   * (i) Not approaching (u_n > −V_EPS/2), only "from rest" could time one, with g > ε_act
   * (one leaving within the band, u_n > V_EPS, is no slow pair's).
   * (ii) A jointed side (`jointed`) makes each contact JOINTED (eventKind; or NOT_EVENT, a fem
   * triangle's, none here): its a_n is contactPull, raised to H_n D_prev where `supported`
   * and the memory valid; its jerk 0 (no near miss recorded, `misses`: an unjointed pair's
   * FREE contact from rest with jerk > 0 is recorded even when it closes after r, and the
   * last piece then defers it; so unjointed pairs are never passed). The servo-rate skip
   * (536e604) and a closing time τ ≥ r only leave a contact out.
   * (iii) |contactPull| = |H_n P M⁻¹ f| ≤ Σ_sides (|a_X| + |α_X| (ρ_X + G)) = B_pull (the
   * row's angular part ω·(r × n), |r| ≤ ρ + G); likewise B_mem for H_n D_prev. Where a side
   * is touched (ContactClearance: a contact of it with gap ≤ ε_act is in the index set, so
   * `supported` holds) and the memory valid, a_n ≥ H_n D_prev ≥ −B_mem; always a_n ≥
   * −B_pull. With B the smaller that applies, s = max(r, NOW h) and `open` a lower bound of
   * the gap of a contact open beyond ε_act (ContactClearance, open gaps; ε_act at least),
   *     g + u_n s' + ½ a_n s'² ≥ open − ½ V_EPS s − ½ B s² ≥ ε_act/2 > 0   (0 ≤ s' ≤ s)
   * when ½ B s² + ½ V_EPS s ≤ open − ε_act/2 (ε_act/2 above rounding), so τ > s: neither
   * now (τ ≤ NOW h) nor within r. Such a contact changes no `take`, deferral or `earliest`;
   * what its detection would still mark, nearContact, `next` marks by detecting once the step
   * splits (`unseen`). A 6-link chain lying on a floor under gravity (Moreau–Jean: its memory
   * not valid after a contact step): B_pull ≈ 11 m/s² (g and the links' angular part, the
   * joints held), ½ B s² ≈ 1e-4 m at 1/240 s, beyond ε_act = 1e-6 m, so passed by `open`
   * alone: a link lying flat has its bottom corners within the band, its top ones 0.02 m up
   * (1.59 detections a step over 5 s where 2.34 passed none, impact-events.test.ts).
   */
  private quiet(
    b: number,
    c: number,
    G: number,
    open: number,
    touchedB: boolean,
    touchedC: boolean,
  ): boolean {
    const jointed = this.jointed;
    if (!(jointed[b] === 1 || (c >= 0 && jointed[c] === 1))) return false;
    const { pullLinear: pl, pullAngular: pa, memoryLinear: ml, memoryAngular: ma } = this;
    let B = this.side(pl, pa, b, G) + this.side(pl, pa, c, G);
    if (this.slowMemory && (touchedB || touchedC))
      B = Math.min(B, this.side(ml, ma, b, G) + this.side(ml, ma, c, G));
    const s = this.slowSpan;
    return 0.5 * B * s * s + 0.5 * V_EPS * s <= open - 0.5 * ACTIVATION_TOLERANCE;
  }

  /**
   * A bound (m/s²) on the normal acceleration at a contact point of body x (−1: the world,
   * 0) with lever arm ≤ ρ_x + G (m), from its centre's |a| (`linear`) and |α| (`angular`).
   */
  private side(linear: Float64Array, angular: Float64Array, x: number, G: number): number {
    const rho = (this.clearance as ContactClearance).rho;
    return x < 0 ? 0 : linear[x] + angular[x] * (rho[x] + G);
  }

  /**
   * Whether the last mayHaveEvents answered false with contacts unseen that may touch (the
   * clearance's slow pairs: none approaching faster than V_EPS, `next`).
   */
  private unseen = false;

  /** The last closingReach (m): `next`'s index set's widening. */
  private closing = 0;

  /**
   * How far (m) beyond its straight line g + r u_n a contact may close within the time r
   * under its normal acceleration, ½ A r² with A = 2 max_b (|a_b| + |α_b| ρ_b + |ω_b|² ρ_b)
   * (a bound on |a_n|: each side's centre's acceleration and its point's about it, at most
   * ρ_b from it, ContactClearance.rho), a_b and α_b the larger of the applied forces' now,
   * M⁻¹ f, and the memory's mean acceleration of the last step (which holds the joints'
   * and the contacts' forces). The quadratic's closing (τ, `next`) is found only for the
   * contacts of the index set, which took those closing on the straight line, g + r u_n ≤
   * ε_act: a ball landing under gravity near a step's end, 1.5e-2 m above the floor at
   * −1.44 m/s (h = 1/100 s), closes at 0.97 h where the line closes after h; it was left
   * out, the step ran it 1.0e-4 m into the floor, and its impact came at the next step's
   * start (test/engine/integrators/impact-friction.test.ts).
   */
  private closingReach(t: number, r: number): number {
    const { sys, force, col } = this;
    if (this.forcesAt !== t) {
      this.stepper.computeForces(t, force);
      this.forcesAt = t;
    }
    massSolve(sys, force, col);
    const prev = this.memory.previousValid ? this.memory.previousAcceleration : null;
    const rho = (this.clearance as ContactClearance).rho;
    const w = sys.omega;
    // (max_b of each body's bound: ½ A r² = that max × r²)
    let most = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      const o = sys.dofOffset[b];
      if (o < 0) continue;
      const rigid = sys.kind[b] === BodyKind.RIGID;
      let ab = 0;
      for (let k = 0; k < (prev === null ? 1 : 2); k++) {
        const a = k === 0 ? col : (prev as Float64Array);
        let centre = Math.hypot(a[o], a[o + 1], a[o + 2]);
        if (rigid) centre += Math.hypot(a[o + 3], a[o + 4], a[o + 5]) * rho[b];
        ab = Math.max(ab, centre);
      }
      if (rigid) ab += (w[3 * b] ** 2 + w[3 * b + 1] ** 2 + w[3 * b + 2] ** 2) * rho[b];
      most = Math.max(most, ab);
    }
    return most * r * r;
  }

  /**
   * Whether side `side` (0: a, 1: b) of contact i is a rigid body whose contact point turns
   * about its centre of mass, |ω × r| > V_EPS (m/s), however slowly. The closed form's
   * error goes with the turn within the step, but against the impulse: Newton's law on the
   * start's lever arm r_t where the impact's is r_τ misses the end velocities by about
   * |ω| τ (1 + e) |u_n| (rad × m/s). Left to it below a turn of TURN (1e-3 rad) a step, the
   * planar box of test/engine/contact/tumbling-box.test.ts, its start angle moved by
   * 1e-6 rad, turning at 0.076 rad/s (3.8e-4 rad a step) struck at 3 m/s: 1.6e-3 m/s off the
   * exact motion; at 0.029 rad/s, landing almost flat, its two corners struck within one
   * step, which the closed form takes together: 0.29 m/s and 3.1e-7 J. A body whose rates
   * are rounding's (resting) stays the closed form's, and so does a round body turning
   * slowly (slowRound).
   */
  private turning(set: ContactSet, i: number, side: number, h: number): boolean {
    const b = side === 0 ? set.bodyA[i] : set.bodyB[i];
    if (b < 0 || set.width(b) !== 6 || this.slowRound(b, h)) return false;
    const r = side === 0 ? set.rA : set.rB;
    const w = this.sys.omega;
    const wx = w[3 * b];
    const wy = w[3 * b + 1];
    const wz = w[3 * b + 2];
    const rx = r[3 * i];
    const ry = r[3 * i + 1];
    const rz = r[3 * i + 2];
    const cx = wy * rz - wz * ry;
    const cy = wz * rx - wx * rz;
    const cz = wx * ry - wy * rx;
    return cx * cx + cy * cy + cz * cz > V_EPS * V_EPS;
  }

  /**
   * Whether body b is round (all its shapes spheres centred on its origin, the centre of
   * mass: moreau-jean.ts roundBodies) and turns by at most TURN within the step of h.
   * Such a body's turn makes no error in impact-location.ts's closed form (frictionless,
   * eventKind: a pair with friction is an event anyway): each of its contact points lies
   * on the line through its centre along the normal, lever arm r = −R n (side b; +R n on
   * side a), so its normal row H_n = (n, r × n) has no angular part. Hence (i) the gap and
   * u_n = n·(v_b − v_a) + (the other side's terms) do not depend on its orientation nor on
   * ω, the gap being the centre's distance to the other surface less R at any turn, and
   * (ii) the normal impulse P n has no moment about the centre: it leaves ω as it was and
   * moves v as a particle's. The lever arm the closed form holds over the step is then the
   * exact one at every instant, and the turning error |ω| τ (1 + e) |u_n⁻| (turning) is 0;
   * its gyroscopic share H_n M⁻¹ f_gyro is 0 too. A faster turn (|ω| h > TURN) stays an
   * event: NonsmoothContact.locatable keeps Siconos' γ = ½ for it, whose activation misses
   * the impacts of the step's second half, and the located bounce steps take the
   * trapezoid's turn, which keeps neither |L| nor ½ ωᵀ I ω of a fast spin (moreau-jean.ts
   * holdTrapezoidTurns; test/engine/integrators/long-run/free-spin.test.ts). A sphere
   * spinning at 0.05 rad/s bouncing at e = ½ (5 ms): its motion the closed form's to
   * 1e-12, one detection a step where the events detected 1.93
   * (test/engine/integrators/impact-events.test.ts).
   */
  private slowRound(b: number, h: number): boolean {
    if (this.round[b] !== 1) return false;
    const w = this.sys.omega;
    return !(h * Math.hypot(w[3 * b], w[3 * b + 1], w[3 * b + 2]) > TURN);
  }

  /**
   * The centripetal part of contact i's normal acceleration (m/s²), the gap's (dH/dt) v
   * term for a material point of a turning body against a surface whose normal stays:
   * Σ_X s_X n · (ω_X × (ω_X × r_X)) = s_X ((n·ω)(ω·r) − |ω|² (n·r)) (s_b = +1, s_a = −1,
   * ContactSet's rows). A box corner spinning at 20 rad/s, 0.27 m from its centre, has
   * 108 m/s² of it, which the memory's mean acceleration H_n D_prev holds none of: its first
   * piece ran up to ½ 108 h² = 1.4 mm past the floor at 5 ms. A side whose lever arm lies
   * along the normal (a sphere, whose contact point is no material point: its gap does not
   * turn with it) has none.
   */
  private centripetal(set: ContactSet, i: number): number {
    const f = set.frame;
    const nx = f[9 * i];
    const ny = f[9 * i + 1];
    const nz = f[9 * i + 2];
    const w = this.sys.omega;
    let an = 0;
    let jerk = 0;
    for (let side = 0; side < 2; side++) {
      const b = side === 0 ? set.bodyA[i] : set.bodyB[i];
      if (b < 0 || set.width(b) !== 6) continue;
      const r = side === 0 ? set.rA : set.rB;
      const rx = r[3 * i];
      const ry = r[3 * i + 1];
      const rz = r[3 * i + 2];
      const nr = nx * rx + ny * ry + nz * rz;
      const r2 = rx * rx + ry * ry + rz * rz;
      // (the lever arm along the normal to 1e-6 of it: a sphere's)
      if (r2 - nr * nr <= 1e-12 * r2) continue;
      const wx = w[3 * b];
      const wy = w[3 * b + 1];
      const wz = w[3 * b + 2];
      const nw = nx * wx + ny * wy + nz * wz;
      const wr = wx * rx + wy * ry + wz * rz;
      const w2 = wx * wx + wy * wy + wz * wz;
      an += (side === 0 ? -1 : 1) * (nw * wr - w2 * nr);
      jerk += w2 * Math.sqrt(w2 * r2);
    }
    this.jerk = jerk;
    return an;
  }

  /** The bound J = Σ |ω|³ |r| (m/s³) of the last `centripetal`'s contact (`next`). */
  private jerk = 0;

  /**
   * Adds to `take` the contacts touching the bodies the taken ones reach, through the
   * bodies they share and the joints (file comment, 2); false when one of them has a
   * fem–fem side.
   */
  private closeTouching(m: number): boolean {
    const { take, reached, takeBound } = this;
    reached.fill(0);
    this.stepper.constraintGroups(this.impulseGroup);
    const limits = this.limits?.limits ?? [];
    for (let k = 0; k < takeBound.length; k++)
      if (takeBound[k] === 1) {
        const q = limits[k >> 1].coordinate;
        this.reach(q.bodyA);
        this.reach(q.bodyB);
      }
    if (this.contact === null) return true;
    const set = this.contact.set;
    for (let i = 0; i < m; i++)
      if (take[i] === 1) {
        this.reach(set.bodyA[i]);
        this.reach(set.bodyB[i]);
      }
    for (let grew = true; grew; ) {
      grew = false;
      for (let i = 0; i < m; i++) {
        if (take[i] === 1) continue;
        const a = set.bodyA[i];
        const b = set.bodyB[i];
        const near = this.isReached(a) || this.isReached(b);
        if (!near || set.gap[i] > 2 * ACTIVATION_TOLERANCE) continue;
        take[i] = 1;
        if (this.reach(a)) grew = true;
        if (this.reach(b)) grew = true;
      }
    }
    for (let i = 0; i < m; i++) if (take[i] === 1 && set.triangle[i] !== 0) return false;
    return true;
  }

  /**
   * Marks dynamic body b's group reached (closeTouching; the joints' groups,
   * AccelerationStepper.constraintGroups, per root); whether it was not yet.
   */
  private reach(b: number): boolean {
    if (b < 0 || this.sys.dofOffset[b] < 0) return false;
    const r = groupRoot(this.impulseGroup, b);
    if (this.reached[r] === 1) return false;
    this.reached[r] = 1;
    return true;
  }

  /**
   * Newton's law at once on the taken contacts at t, with the joints (file comment, 2),
   * and Coulomb's law on the tangential impulses of those with friction (file comment,
   * friction).
   */
  private impact(t: number, h: number): void {
    const set = this.contact?.set ?? null;
    const { sys, f, v } = this;
    const n = sys.numDofs;
    getVelocity(sys, v);
    let kc = 0;
    const contacts = set?.count ?? 0;
    this.rows = grow(this.rows, contacts + this.limitRows());
    let friction = false;
    for (let i = 0; i < contacts; i++)
      if (this.take[i] === 1) {
        this.rows[kc++] = i;
        if ((set as ContactSet).friction[i] > 0) friction = true;
      }
    // the bounds touching now of the joints the impact reaches: rows kc.. (limit rows)
    let k = kc;
    const limits = this.limits;
    if (limits !== null) {
      const m = limits.touchingRows();
      for (let l = 0; l < m; l++) {
        const q = limits.activeLimit(l).coordinate;
        if (this.isReached(q.bodyA) || this.isReached(q.bodyB)) this.rows[k++] = l;
      }
    }
    // columns: d a row, (n, t1, t2) with friction (a limit's and a frictionless contact's
    // tangential impulses held at 0 by μ = 0; a limit's two are placeholders, W's diagonal 1)
    const d = friction ? 3 : 1;
    const m = d * k;
    this.D = grow(this.D, m * m);
    this.q = grow(this.q, m);
    this.P = grow(this.P, m);
    this.X = grow(this.X, m * n);
    this.mu = grow(this.mu, k);
    const rows = this.rowRates.length;
    this.L = grow(this.L, m * rows);
    const ws = this.jointsFactoredAt(t);
    // x_j = M⁻¹H_jᵀ on the joints' tangent in the kinetic metric, D_ij = H_i x_j
    const x = this.col;
    for (let j = 0; j < m; j++) {
      const row = (j / d) | 0;
      const c = j - d * row;
      const real = c === 0 || row < kc;
      f.fill(0);
      if (real) this.addRow(row, c, kc, f);
      massSolve(sys, f, x);
      if (ws !== null) {
        jointTangent(ws, x, this.rowRates);
        for (let r = 0; r < rows; r++) this.L[j * rows + r] = -this.rowRates[r];
      }
      this.X.set(x, j * n);
      for (let i = 0; i < m; i++) {
        const ri = (i / d) | 0;
        const ci = i - d * ri;
        this.D[i * m + j] = ci === 0 || ri < kc ? this.rowTimes(ri, ci, kc, x) : 0;
      }
      if (!real) this.D[j * m + j] = 1;
    }
    // the applied forces at the impact, whose pull on a row tells a rebound the steps
    // cannot resolve (rowRestitution; those of `next` at t, the state unchanged since)
    if (this.forcesAt !== t) {
      this.stepper.computeForces(t, this.force);
      this.forcesAt = t;
    }
    for (let i = 0; i < k; i++)
      this.mu[i] = i < kc ? (set as ContactSet).friction[this.rows[i]] : 0;
    const before = kineticEnergy(sys);
    if (d === 3) this.vBefore.set(v);
    let solved = this.solveImpact(k, kc, d, h, 0);
    let after = this.applyImpact(m, n);
    // Moreau's law with the tangential velocity's own restitution 0 can make energy where
    // the normal and tangential rows couple (Kane's paradox), or have no solution (a
    // jointed body jammed by its friction: file comment, friction): then the law on the
    // mean velocity, w = u⁺ + e u⁻ in all three rows, which cannot make energy and has one
    if (d === 3 && (!solved || after > before * (1 + ENERGY_ROUNDING))) {
      v.set(this.vBefore);
      solved = this.solveImpact(k, kc, d, h, 1);
      after = this.applyImpact(m, n);
    }
    // a law whose solve stopped at its bound (Lemke's ray, or the fallback's Gauss–Seidel
    // too) is taken as it stands, and the step's stats say so (contactConverged false, its
    // residual in contactResidual): the run goes on, as after a contact solve stopped short
    // (a residual not finite: Infinity; one of 0 still marks it)
    if (!solved)
      this.unsolved = Math.max(
        this.unsolved,
        Number.isFinite(this.residual) ? this.residual : Number.POSITIVE_INFINITY,
        Number.MIN_VALUE,
      );
    for (let j = 0; j < m; j++) {
      const p = this.P[j];
      const row = (j / d) | 0;
      const c = j - d * row;
      if (c === 0 && p > 0) {
        if (row < kc) {
          const o = d * row;
          const pt1 = d === 3 ? this.P[o + 1] : 0;
          const pt2 = d === 3 ? this.P[o + 2] : 0;
          (this.contact as NonsmoothContact).addImpact(this.rows[row], p, pt1, pt2);
        } else {
          // the limit's effort over the step: σ P (its sign the coordinate's)
          const l = limits as JointLimitProblem;
          this.limitImpulse[l.rowLimit(this.rows[row])] += l.rowSide(this.rows[row]) * p;
        }
      }
      if (ws !== null && (c === 0 ? p > 0 : p !== 0))
        for (let r = 0; r < rows; r++) this.jointImpulse[r] += p * this.L[j * rows + r];
    }
    // the contacts' and limits' work (the energy balance, simulation/monitor.ts)
    this.stepper.removedEnergy += before - after;
  }

  /**
   * The impact's impulses P (m = d k columns) for the velocities in `v`: Newton's law on
   * each row's normal, its own restitution (a contact's pair, a limit's), and with friction
   * (d = 3) Coulomb's on the tangential velocity u_t⁺ + e_t e u_t⁻ (et 0: Moreau's law; 1:
   * the tangential rows' restitution the normal's). Frictionless, the LCP by Lemke (exact);
   * with friction, the Coulomb problem by Gauss–Seidel (IMPACT_SOLVE). Whether it solved the
   * law: converged, or with friction stalled within IMPACT_STALL (its residual, m/s, in
   * `residual`).
   */
  private solveImpact(k: number, kc: number, d: number, h: number, et: number): boolean {
    const { v } = this;
    const set = this.contact?.set ?? null;
    for (let i = 0; i < k; i++) {
      const un = this.rowTimes(i, 0, kc, v);
      const e = this.rowRestitution(
        i < kc ? (set as ContactSet).restitution[this.rows[i]] : this.boundRestitution(i),
        d * i,
        un,
        h,
      );
      this.q[d * i] = un + e * Math.min(un, 0);
      for (let c = 1; c < d; c++) {
        const ut = i < kc ? this.rowTimes(i, c, kc, v) : 0;
        this.q[d * i + c] = ut * (1 + et * e);
      }
    }
    const m = d * k;
    this.P.fill(0, 0, m);
    // (W dense with row stride m, its first m² entries; q's first m)
    const lcp = this.lcp;
    lcp.contacts = k;
    lcp.contactDim = d === 3 ? 3 : 1;
    lcp.W = this.D;
    lcp.q = this.q;
    lcp.mu = this.mu;
    if (d === 1) {
      const res = this.lemke.solve(lcp, this.P);
      this.residual = res.residual;
      return res.converged;
    }
    const windows = IMPACT_SOLVE.maxIterations / IMPACT_WINDOW;
    let res = this.pgs.solve(lcp, this.P, IMPACT_FIRST);
    let polished = false;
    for (let w = 1; w < windows && !res.converged; w++) {
      const before = res.residual;
      res = this.pgs.solve(lcp, this.P, IMPACT_NEXT);
      if (res.converged || polished || res.residual <= 0.5 * before || w === windows - 1) continue;
      // stalled (IMPACT_WINDOW): the polish, once; where it falls short, the sweeps go on
      // from its iterate
      polished = true;
      const r = this.newton.polish(
        k,
        this.D,
        this.q,
        this.mu,
        this.P,
        IMPACT_SOLVE.tolerance,
        IMPACT_NEWTON,
      );
      if (r <= IMPACT_SOLVE.tolerance) {
        this.residual = r;
        return true;
      }
    }
    this.residual = res.residual;
    if (res.converged) return true;
    // stopped at the bound: a stall, or a jam (IMPACT_STALL)
    let speed = 0;
    for (let j = 0; j < m; j++) speed = Math.max(speed, Math.abs(this.q[j]));
    return res.residual <= IMPACT_STALL * speed;
  }

  /** v ← v + Σ_j P_j x_j into the system's velocities; their kinetic energy (J). */
  private applyImpact(m: number, n: number): number {
    const { sys, v } = this;
    for (let j = 0; j < m; j++) {
      const p = this.P[j];
      if (p === 0) continue;
      const o = j * n;
      for (let d = 0; d < n; d++) v[d] += p * this.X[o + d];
    }
    setVelocity(sys, v);
    return kineticEnergy(sys);
  }

  /**
   * The joints' projection workspace with G = Cq(x, t) and S = G M⁻¹ Gᵀ factored at the
   * current pose x and t, or null where the model has no joint rows (contactPull,
   * coordinatePull, accelerationBounds, impact). Factored once for a pose and t: again only
   * where t differs from the last factoring here (factoredAt), the pose moved since (a
   * piece stepped: `advance` forgets factoredAt at its start and after each piece; an impact
   * and the lags' restaggers move the velocities alone, on which neither G nor S depends),
   * or another user of the shared workspace factored it since (its `factorings` past
   * factoredCount: the stepper's, at another pose or time). G may depend on t (a rheonomic
   * joint, ConstraintSet.timeDependent), hence the time in the key. Where all three hold,
   * the factorization in the workspace is the one factorAt(t) would make again, bit for
   * bit: `next`'s pulls and the impact at the same instant, and the `next` after an impact,
   * share one (the impact factored afresh before: on bench/impacts.ts' 6-link chain
   * swinging onto a floor, 1/240 s, 3 s, those factorings 3.50 → 1.09 a step at e = ½, its
   * 868 impacts, 1.48 → 1.27 at e = 1, 1.08 → 1.04 at e = 0; the motion bit for bit).
   */
  private jointsFactoredAt(t: number): ProjectionWorkspace | null {
    const c = this.constraints;
    if (c === null || c.numRows === 0) return null;
    const ws = projectionWorkspace(c);
    if (this.factoredAt !== t || ws.factorings !== this.factoredCount) {
      ws.factorAt(t);
      this.factoredAt = t;
      this.factoredCount = ws.factorings;
    }
    return ws;
  }

  /**
   * The time (s) of the applied forces in `force`, in `forceEnd` (at the end of the time
   * left, the state held) and of the joints' factor (coordinatePull).
   */
  private forcesAt = Number.NaN;
  private forcesEndAt = Number.NaN;
  private factoredAt = Number.NaN;
  /** The workspace's `factorings` right after the last factoring here (jointsFactoredAt). */
  private factoredCount = -1;

  /** Whether some applied force changes with time, the state held (ForceEffector.timeDependent). */
  private timeDependent(): boolean {
    const effectors = this.stepper.effectors;
    for (let k = 0; k < effectors.length; k++) if (effectors[k].timeDependent === true) return true;
    return false;
  }

  /**
   * The acceleration (rad/s² or m/s²) the applied forces at t give coordinate q, the joints
   * held: q̈ = x · f, x = M⁻¹ gᵀ on the joints' tangent (g the coordinate's gradient; the
   * impact's column, boundRestitution's pull), its velocity terms (the curvature of q and of
   * the joints, O(v²)) left out. The forces and the joints' factor are taken once a `next`.
   */
  private coordinatePull(t: number, q: JointCoordinate, at = t): number {
    this.f.fill(0);
    q.spread(1, this.f);
    return this.pullAlong(t, at);
  }

  /**
   * coordinatePull's at the coordinate's rate 0 (rad/s², m/s²): the velocities moved by
   * −q̇ x/(g·x) (x = M⁻¹gᵀ on the joints' tangent, the least kinetic energy change that
   * stops q), the forces evaluated there, then the velocities put back and the forces
   * evaluated again at them (an actuator reports the effort of its last evaluation). The
   * difference from coordinatePull's is the pull's dependence on the rate (dampedAway).
   */
  private pullAtRest(t: number, q: JointCoordinate): number {
    const { sys, f, col: x, vRest, forceRest } = this;
    f.fill(0);
    q.spread(1, f);
    const ws = this.jointsFactoredAt(t);
    massSolve(sys, f, x);
    if (ws !== null) jointTangent(ws, x, this.rowRates);
    // (the rate a unit impulse along g gives q, 1/Ĩ)
    let response = 0;
    for (let d = 0; d < x.length; d++) response += f[d] * x[d];
    if (!(response > 0)) return this.coordinatePull(t, q);
    q.evaluate();
    const c = -q.rate / response;
    getVelocity(sys, vRest);
    for (let d = 0; d < x.length; d++) f[d] = vRest[d] + c * x[d];
    setVelocity(sys, f);
    this.stepper.computeForces(t, forceRest);
    setVelocity(sys, vRest);
    q.evaluate();
    this.stepper.computeForces(t, this.force);
    this.forcesAt = t;
    let a = 0;
    for (let d = 0; d < x.length; d++) a += x[d] * forceRest[d];
    return a;
  }

  /**
   * The normal acceleration (m/s²) the applied forces at t give contact i of `set`, the
   * joints held (as coordinatePull, H_n's column for the coordinate's; the velocity terms
   * left out: centripetal).
   */
  private contactPull(t: number, set: ContactSet, i: number): number {
    this.f.fill(0);
    set.addRowTranspose(i, 0, 1, this.f);
    return this.pullAlong(t);
  }

  /**
   * x · f(at) with x = M⁻¹ g on the joints' tangent at t, g the generalized row in `f`
   * (`at` > t: the forces at the end of the time left, the state held, in `forceEnd`).
   */
  private pullAlong(t: number, at = t): number {
    const { sys, f, col: x } = this;
    const ws = this.jointsFactoredAt(t);
    const end = at !== t;
    const force = end ? this.forceEnd : this.force;
    if ((end ? this.forcesEndAt : this.forcesAt) !== at) {
      this.stepper.computeForces(at, force);
      if (end) this.forcesEndAt = at;
      else this.forcesAt = at;
    }
    massSolve(sys, f, x);
    if (ws !== null) jointTangent(ws, x, this.rowRates);
    let a = 0;
    for (let d = 0; d < x.length; d++) a += x[d] * force[d];
    return a;
  }

  /**
   * The restitution of the impact's row whose column is col, its own e (a contact's pair, a
   * limit's), at the rate u (< 0 approaching): e, or 0 for a rebound the steps of h cannot
   * resolve, one whose flight against the row's pull a is at most four steps
   * (unresolvedRebound), as JointLimitProblem.solve takes a bound's: a joint or a body whose
   * bounces accumulate (a Zeno sequence) then rests on its bound or surface instead of
   * bouncing at ever shorter flights. The pull is the applied forces' along the row with
   * the joints held, a = −x_j · f (x_j = M⁻¹H_jᵀ on the joints' tangent, the impact's
   * column: H_j's free acceleration); the last step's mean acceleration is the bound's own
   * hold where the joint rests on it (0: a slider pushed onto its bound at e = ½ under
   * backward-euler hopped at every step). A contact's rebound so short returned within the
   * step, which `next` does not look for (it takes approaching contacts only), and the
   * piece ran it past the surface: a rolling ball at e = ½ (h = 1/100 s) ended every step
   * 1e-4 m in the floor at −0.065 m/s, an impact at each step's start for ever, and came to
   * rest 4.3e-5 m in at 1/240 s.
   */
  private rowRestitution(e: number, col: number, u: number, h: number): number {
    const n = this.sys.numDofs;
    let an = 0;
    for (let d = 0; d < n; d++) an += this.X[col * n + d] * this.force[d];
    return e > 0 && unresolvedRebound(e, u, -an * h) ? 0 : e;
  }

  /** The restitution of the impact's row j, a limit's bound. */
  private boundRestitution(j: number): number {
    return (this.limits as JointLimitProblem).activeLimit(this.rows[j]).restitution;
  }

  /** The limits' bound rows at most (2 a limit: impact). */
  private limitRows(): number {
    return 2 * (this.limits?.limits.length ?? 0);
  }

  /** Whether dynamic body b is among those the impact reaches (closeTouching). */
  private isReached(b: number): boolean {
    return (
      b >= 0 && this.sys.dofOffset[b] >= 0 && this.reached[groupRoot(this.impulseGroup, b)] === 1
    );
  }

  /**
   * out += H_j,cᵀ for the impact's row j: a contact's (j < kc) local row c (0 its normal,
   * 1, 2 its tangents) or a limit's bound (c 0).
   */
  private addRow(j: number, c: number, kc: number, out: Float64Array): void {
    if (j < kc) (this.contact as NonsmoothContact).set.addRowTranspose(this.rows[j], c, 1, out);
    else (this.limits as JointLimitProblem).addRow(this.rows[j], 1, out);
  }

  /** H_j,c v for the impact's row j (addRow). */
  private rowTimes(j: number, c: number, kc: number, v: Float64Array): number {
    return j < kc
      ? (this.contact as NonsmoothContact).set.rowTimes(this.rows[j], c, v)
      : (this.limits as JointLimitProblem).rowRate(this.rows[j], v);
  }
}
