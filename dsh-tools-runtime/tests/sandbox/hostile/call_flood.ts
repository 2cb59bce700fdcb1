// expect: call-limit: tool call limit reached (256 calls per run)
// A thousand tool calls: the 257th is refused, and the refusal ends the program.
for (let i = 0; i < 1000; i++) await tools.echo({ i });
