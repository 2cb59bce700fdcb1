// Survey the public functions of the authoring crate: which modules define the most?
const files = await tools.glob({ pattern: "*.rs", path: "dsh-tools/src" });
const hits = await tools.grep({ pattern: "^\\s*pub fn ", path: "dsh-tools/src" });

const perFile: Record<string, number> = {};
for (const file of hits.files) {
  perFile[file.path] = file.matches.length;
}
const top = Object.entries(perFile)
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  .slice(0, 5)
  .map(([path, count]) => `${count.toString().padStart(3)}  ${path}`);

console.log(`${files.total} Rust files, ${hits.total} public functions; the busiest modules:`);
return top.join("\n");
