// Node.js's own `fs`, plus `globSync` where Node.js lacks it (it throws: only the suite's
// `tier-check` command uses it, and the tests never run that command).
import fs from "node:fs";

export * from "node:fs";
export default fs;
export const globSync =
  fs.globSync ??
  function globSync() {
    throw new Error("fs.globSync needs Node.js 22 (used only by `conformance tier-check`)");
  };
