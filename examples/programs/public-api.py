# Survey the public functions of the authoring crate: which modules define the most?
import asyncio

files, hits = await asyncio.gather(
    tools.glob({"pattern": "*.rs", "path": "dsh-tools/src"}),
    tools.grep({"pattern": r"^\s*pub fn ", "path": "dsh-tools/src"}),
)
per_file = {file["path"]: len(file["matches"]) for file in hits["files"]}
top = sorted(per_file.items(), key=lambda item: (-item[1], item[0]))[:5]
print(f"{files['total']} Rust files, {hits['total']} public functions; the busiest modules:")
return "\n".join([f"{count:>3}  {path}" for path, count in top])
