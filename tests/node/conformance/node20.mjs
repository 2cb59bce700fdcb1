// Runs @modelcontextprotocol/conformance on Node.js 20 (`node --import ./node20.mjs …`).
//
// The suite's bundle imports `globSync` from `fs` (Node.js 22+) at the top, though only its
// `tier-check` command calls it; on Node.js 20 the import alone stops the bundle from loading.
// This registers a resolve hook that gives the bundle, and only the bundle, an `fs` with that
// one export added (which throws if ever called). Nothing else of the suite is touched.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
