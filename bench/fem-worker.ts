/**
 * One repetition of the fem benchmark in a fresh process (fem.ts, runFemBench):
 *   node --import tsx bench/fem-worker.ts [steps]
 * runs every variant and prints one line `RESULT {json}` (a FemRepetition).
 */
import os from "node:os";
import { type FemRepetition, measureFem } from "./fem";
import { printResult } from "./fresh-process";

const loadAverage = os.loadavg()[0];
const steps = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
const repetition: FemRepetition = { rows: measureFem(steps), loadAverage };
printResult(repetition);
