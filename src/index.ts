/**
 * The engine's public entry. The service, the tests and any embedding program use the
 * engine only through this module.
 *
 *   const sim = loadModel(json);   // validates with schemas/model (throws ModelError)
 *   sim.step(100);                 // advances 100 steps of solver.dt (DivergenceError on blow-up)
 *   sim.state();                   // State (schemas/state)
 *   sim.reset();                   // back to t = 0 as loaded
 *   sim.assemble(options);         // AssemblyResult (Chrono ChAssemblyAnalysis semantics)
 */
export { loadModel, ModelError, type ModelIssue } from "./model/load";
export { DivergenceError, Simulation, SolverError, type SimulationPatch } from "./simulation/simulation";
