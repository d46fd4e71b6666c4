"""Memory of a store holding many small terminals: what each terminal costs when it holds
little, its fixed state and its entry.

Applies one short ``terminal_output_chunk`` to each of 100,000 terminals of one session and
prints how much the peak RSS grew.

    python benches/scripts/many_terminals.py [plain|coloured] [native|pure]
"""

import base64
import resource
import sys

import acpwire._native as N
import acpwire._pure as P

CHUNKS = {"plain": b"$ ls\r\nfile\r\n", "coloured": b"\x1b[32mok\x1b[0m\r\n"}
kind = sys.argv[1] if len(sys.argv) > 1 else "plain"
backend = sys.argv[2] if len(sys.argv) > 2 else "native"
data = base64.b64encode(CHUNKS[kind]).decode()
store = (N if backend == "native" else P).Sessions()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for i in range(100_000):
    update = {"sessionUpdate": "terminal_output_chunk", "terminalId": f"t{i}", "data": data}
    store.apply(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
    )
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(f"{backend}, {kind} chunk: peak RSS grew by {grown:.0f} MiB for 100,000 terminals")
