// The resolve hook of node20.mjs: `fs` imported by the conformance bundle resolves to fs.mjs.
const BUNDLE = "/node_modules/@modelcontextprotocol/conformance/";

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes(BUNDLE)) {
    return { url: new URL("./fs.mjs", import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
