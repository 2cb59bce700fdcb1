# expect: call-limit: tool call limit reached (256 calls per run)
# Ten thousand tool calls: the 257th is refused, and the refusal ends the program.
for i in range(10_000):
    await tools.echo({"i": i})
