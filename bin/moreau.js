#!/usr/bin/env node
// The `moreau` command (package.json "bin"): registers tsx's TypeScript loader and runs
// src/cli/main.ts, so the command line needs no build step (tsx is a production
// dependency). Usage: `moreau --help`, `npx moreau ...` or `npm run cli -- ...`.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
