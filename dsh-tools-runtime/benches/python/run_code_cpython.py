"""The CPython side of `benches/python.rs`: run a Code Mode program the way a CPython sandbox
would, its tool calls answered by the parent over stdin/stdout (one JSON document per line).

With `--warm`, one process serves many runs (one per `run` line, each program in a fresh
namespace); without, it serves one run and exits (a fresh process per run).
"""

import asyncio
import json
import sys
import textwrap


class _Tools:
    def __getattr__(self, name):
        async def call(args):
            sys.stdout.write(json.dumps({"call": name, "args": args}) + "\n")
            sys.stdout.flush()
            return json.loads(sys.stdin.readline())["value"]

        return call

    def __getitem__(self, name):
        return self.__getattr__(name)


class ToolCallError(Exception):
    pass


def run(program):
    logs = []
    body = textwrap.indent(program, "    ")
    namespace = {"tools": _Tools(), "ToolCallError": ToolCallError, "print": lambda *a: logs.append(" ".join(map(str, a)))}
    exec(f"async def __main__():\n{body}\n", namespace)
    result = asyncio.run(namespace["__main__"]())
    sys.stdout.write(json.dumps({"done": {"logs": logs, "result": result}}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    if "--warm" in sys.argv:
        while line := sys.stdin.readline():
            run(json.loads(line)["run"])
    else:
        run(json.loads(sys.stdin.readline())["run"])
