#!/bin/sh
# Install each wheel of a directory with the interpreter its tag names (the manylinux and
# musllinux images keep every CPython under /opt/python/<tag>), then import it and run a
# frame through it. Run inside the image, under emulation where the architecture differs.
set -eu
dist=$1
count=0
for wheel in "$dist"/*.whl; do
    tag=$(basename "$wheel" | cut -d- -f3-4)        # cp311-cp311, cp314-cp314t
    python="/opt/python/$tag/bin/python"
    [ -x "$python" ] || { echo "no interpreter for $wheel"; exit 1; }
    venv="/tmp/venv-$tag"
    "$python" -m venv "$venv"
    # The native backend imports no dependency, so the wheel alone is enough.
    "$venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"
    "$venv/bin/python" -c '
import acpwire
assert acpwire.BACKEND == "native", acpwire.BACKEND
message = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
assert acpwire.FrameDecoder().feed(acpwire.dumps(message)) == [message]
print("imported", acpwire.__version__, acpwire._native.__file__)
'
    count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "no wheels in $dist"; exit 1; }
echo "$count wheels imported"
