"""Peak memory of a store whose terminals are fed many distinct OSC 8 links.

Twenty terminals each get 4,096 distinct links of about 2 KB (each around one character), 163
MB in all, through ``Sessions.apply``; prints the peak RSS and how many terminals were
cleared. A store's ``max_terminal_bytes`` counts each link (8 plus its UTF-8 length), so the
peak stays near the bound; with the bound lifted, the links are all kept.

    python benches/scripts/link_memory.py [native|pure] [BOUND_MIB]   (default: native 8)
"""

import base64
import resource
import sys

import acpwire._native as N
import acpwire._pure as P

backend = sys.argv[1] if len(sys.argv) > 1 else "native"
bound = int(float(sys.argv[2]) * (1 << 20)) if len(sys.argv) > 2 else 8 << 20
store = (N if backend == "native" else P).Sessions(max_terminal_bytes=bound)
fed = 0
for terminal in range(20):
    for part in range(8):
        data = b"".join(
            b"\x1b]8;;https://example.com/%s/%06d\x07x\x1b]8;;\x07"
            % (b"p" * 1950, terminal * 10_000 + part * 512 + i)
            for i in range(512)
        )
        fed += len(data)
        update = {
            "sessionUpdate": "terminal_output_chunk",
            "terminalId": f"t{terminal}",
            "data": base64.b64encode(data).decode(),
        }
        store.apply(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": update},
            }
        )
terminals = store["s"].snapshot()["terminals"].values()
cleared = sum(t["truncated"] for t in terminals)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{backend}, bound {bound / (1 << 20):g} MiB: {fed / 1e6:.0f} MB of links fed")
print(f"peak RSS {peak:.0f} MiB; {cleared} of 20 terminals cleared")
