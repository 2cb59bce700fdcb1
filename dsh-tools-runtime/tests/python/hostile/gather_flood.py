# expect: call-limit: tool call limit reached (256 calls per run)
import asyncio

await asyncio.gather(*[tools.echo({"i": i}) for i in range(10_000)])
