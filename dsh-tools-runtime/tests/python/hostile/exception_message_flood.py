# expect: output-limit: outer output exceeded 65536 bytes
# limits: output=65536
# The failure message counts against the output budget too.
raise ValueError("x" * 1_000_000)
