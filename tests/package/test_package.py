"""Backend selection, version, stubs and the check command."""

from __future__ import annotations

import array
import copy
import inspect
import io
import json
import os
import pickle
import subprocess
import sys
import sysconfig
import threading
from importlib import resources

import pytest

import acpwire
from conftest import BACKENDS

# A run with ACPWIRE_TEST_BACKENDS=pure (an install from the pure wheel) has no extension.
needs_native = pytest.mark.skipif(
    "native" not in BACKENDS, reason="ACPWIRE_TEST_BACKENDS leaves the native backend out"
)

BLOCK_NATIVE = (
    "import sys, importlib.abc\n"
    "class Block(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        if name == 'acpwire._native':\n"
    "            raise ModuleNotFoundError('no native', name=name)\n"
    "sys.meta_path.insert(0, Block())\n"
)


def run_python(code: str, backend: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("ACPWIRE_BACKEND", None)
    if backend is not None:
        env["ACPWIRE_BACKEND"] = backend
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_version():
    assert acpwire.__version__ and acpwire.__version__ != "0+unknown"


@pytest.mark.parametrize("choice", ["pure", pytest.param("native", marks=needs_native)])
def test_backend_env_var(choice):
    result = run_python(
        "import acpwire; print(acpwire.BACKEND, acpwire.FrameDecoder.__module__)", choice
    )
    assert result.returncode == 0, result.stderr
    name, module = result.stdout.split()
    assert name == choice
    assert module.startswith("acpwire._native" if choice == "native" else "acpwire._pure")


@needs_native
def test_default_prefers_native():
    result = run_python("import acpwire; print(acpwire.BACKEND)")
    assert result.stdout.strip() == "native", result.stderr


def test_missing_extension_falls_back_to_pure():
    result = run_python(BLOCK_NATIVE + "import acpwire; print(acpwire.BACKEND)")
    assert result.stdout.strip() == "pure", result.stderr


def test_missing_extension_with_native_forced_is_a_clear_import_error():
    result = run_python(BLOCK_NATIVE + "import acpwire", "native")
    assert result.returncode != 0
    assert "ImportError: ACPWIRE_BACKEND=native" in result.stderr


def test_broken_extension_is_not_hidden():
    broken = BLOCK_NATIVE.replace(
        "raise ModuleNotFoundError('no native', name=name)",
        "raise ModuleNotFoundError('libfoo missing', name='libfoo')",
    )
    result = run_python(broken + "import acpwire")
    assert result.returncode != 0 and "libfoo missing" in result.stderr


def test_bad_backend_name():
    result = run_python("import acpwire", "fast")
    assert result.returncode != 0 and "ACPWIRE_BACKEND must be" in result.stderr


@needs_native
def test_exceptions_are_shared_between_backends():
    import acpwire._native as native
    import acpwire._pure as pure

    for name in ("FrameError", "DecodeError", "EncodeError"):
        assert getattr(native, name) is getattr(pure, name) is getattr(acpwire, name)
    assert issubclass(acpwire.FrameError, ValueError)
    assert issubclass(acpwire.DecodeError, ValueError)
    assert issubclass(acpwire.EncodeError, TypeError)


# Constructor arguments of every kind, valid or not: each backend must accept or refuse each
# alike, with the same exception type and message.
_ARGUMENTS = (
    [
        (cls, {name: value})
        for cls, names in (
            ("FrameDecoder", ["max_frame_bytes"]),
            ("Terminal", ["cols", "rows", "scrollback", "max_bytes"]),
            ("Sessions", ["max_frame_bytes", "terminal_cols", "scrollback"]),
        )
        for name in names
        for value in (0, 1, -1, 7, 65_535, 65_536, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**200)
    ]
    + [
        (cls, {name: value})
        for cls, name in (("FrameDecoder", "max_frame_bytes"), ("Terminal", "rows"))
        for value in (True, 10.0, "5", None, [])
    ]
    + [("FrameDecoder", {"raw": value}) for value in (True, False, 1, 0, None, "yes")]
    # Two bad arguments: the same one is reported (each is read before any is checked).
    + [
        ("FrameDecoder", {"max_frame_bytes": 0, "raw": 1}),
        ("Terminal", {"cols": 0, "rows": 1.5}),
        ("Terminal", {"rows": 0, "max_bytes": "x"}),
        ("Terminal", {"cols": 70_000, "rows": 0}),
        ("Sessions", {"max_frame_bytes": 0, "terminal_cols": -1}),
        ("Sessions", {"max_frame_bytes": 0, "scrollback": 1.5}),
        ("Sessions", {"terminal_cols": 70_000, "scrollback": -1}),
    ]
)


def test_backends_take_the_same_constructor_arguments(both):
    def outcome(module, cls, options):
        try:
            getattr(module, cls)(**options)
        except (TypeError, ValueError, OverflowError) as e:
            return type(e).__name__, str(e)
        return "ok"

    native, pure = both
    for cls, options in _ARGUMENTS:
        assert outcome(native, cls, options) == outcome(pure, cls, options), (cls, options)
    # Sizes past the machine word are as good as unlimited, not an overflow.
    assert outcome(native, "Terminal", {"max_bytes": 2**200}) == "ok"
    assert outcome(native, "FrameDecoder", {"max_frame_bytes": 2**64}) == "ok"
    # Up to 2**64 - 1 a size reads back as given, beyond that as 2**64 - 1.
    for module in both:
        for given, kept in ((2**63 - 1,) * 2, (2**63,) * 2, (2**64 - 2,) * 2, (2**70, 2**64 - 1)):
            assert module.FrameDecoder(given).max_frame_bytes == kept, (module, given)


_UPDATE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}}\n'
)


def _store(module):
    store = module.Sessions()
    store.feed(_UPDATE)
    return store


# Calls with arguments of the wrong type or value, and edge values that are right: each
# backend must give the same result or raise the same exception with the same message.
_CALLS = {
    "FrameDecoder.feed(str)": lambda m: m.FrameDecoder().feed("{}\n"),
    "FrameDecoder.feed(int)": lambda m: m.FrameDecoder().feed(5),
    "FrameDecoder.feed(array of bytes)": lambda m: m.FrameDecoder().feed(array.array("B", b"{}\n")),
    "FrameDecoder.feed(array of ints)": lambda m: m.FrameDecoder().feed(array.array("i", [1])),
    "FrameDecoder.feed(strided view)": lambda m: m.FrameDecoder().feed(
        memoryview(b"{}\n{}\n")[::2]
    ),
    "Terminal.feed(str)": lambda m: m.Terminal().feed("x"),
    # bytes(5) would be five NUL bytes: an int is not data.
    "Terminal.feed(int)": lambda m: m.Terminal().feed(5),
    "Terminal.feed(list)": lambda m: m.Terminal().feed([65, 66]),
    "Terminal.feed_base64(int)": lambda m: m.Terminal().feed_base64(5),
    "Terminal.feed_base64(bytearray)": lambda m: m.Terminal().feed_base64(bytearray(b"aGk=")),
    "Terminal.reset(None)": lambda m: m.Terminal().reset(None),
    "Terminal.reset(empty str)": lambda m: m.Terminal().reset(""),
    "Terminal.reset_base64(None)": lambda m: m.Terminal().reset_base64(None),
    "render_text(str)": lambda m: m.render_text("x"),
    "loads(int)": lambda m: m.loads(5),
    "loads(array of ints)": lambda m: m.loads(array.array("i", [1])),
    "loads(bytearray)": lambda m: m.loads(bytearray(b"[1]")),
    "dumps(set)": lambda m: m.dumps({1}),
    "Sessions.feed(str)": lambda m: m.Sessions().feed("x\n"),
    "Sessions.apply(bytes)": lambda m: m.Sessions().apply(_UPDATE),
    "Sessions[int]": lambda m: m.Sessions()[123],
    "Sessions[missing]": lambda m: m.Sessions()["missing"],
    # The KeyError holds the key, whatever it is (a tuple or None is not its arguments).
    "Sessions[None]": lambda m: m.Sessions()[None],
    "Sessions[tuple]": lambda m: m.Sessions()[("a",)],
    "Sessions[empty tuple]": lambda m: m.Sessions()[()],
    "int in Sessions": lambda m: 123 in m.Sessions(),
    "list in Sessions": lambda m: [1] in m.Sessions(),
    "Sessions[list]": lambda m: m.Sessions()[[1]],
    "message_text(int)": lambda m: _store(m)["s"].message_text(5),
    "message_text(role=None)": lambda m: _store(m)["s"].message_text("m", None),
    "message_text(unknown role)": lambda m: _store(m)["s"].message_text("m", "bogus"),
    "terminal(int)": lambda m: _store(m)["s"].terminal(5),
    "reduce_ndjson(missing file)": lambda m: m.reduce_ndjson("/nonexistent/trace.ndjson"),
    "reduce_ndjson(directory)": lambda m: m.reduce_ndjson("/"),
    "reduce_ndjson(text file)": lambda m: m.reduce_ndjson(io.StringIO("")),
    "reduce_ndjson(unknown option)": lambda m: m.reduce_ndjson(io.BytesIO(b""), bogus=1),
    "reduce_ndjson(bad option)": lambda m: m.reduce_ndjson(io.BytesIO(b""), scrollback=-1),
    "repr(Session)": lambda m: _store(m)["s"],
    # Names come from JSON: a str that is not valid UTF-8 names nothing.
    "message_text(lone surrogate)": lambda m: _store(m)["s"].message_text("\ud800"),
    "message_text(role lone surrogate)": lambda m: _store(m)["s"].message_text("m", "\udc00"),
    "terminal(lone surrogate)": lambda m: _store(m)["s"].terminal("\ud800"),
    "char_width(-1)": lambda m: m.char_width(-1),
    "char_width(2**32)": lambda m: m.char_width(2**32),
    "char_width(2**63)": lambda m: m.char_width(2**63),
    "char_width(-(2**63) - 1)": lambda m: m.char_width(-(2**63) - 1),
    # An int is no path: `open` would take it as a file descriptor and close it.
    "reduce_ndjson(int)": lambda m: m.reduce_ndjson(0),
    "reduce_ndjson(bytes)": lambda m: m.reduce_ndjson(b"trace.ndjson"),
    "reduce_ndjson(non-blocking file)": lambda m: m.reduce_ndjson(_NothingYet()),
}


class _NothingYet:
    """A non-blocking binary stream with no data yet: its ``read`` returns None."""

    def read(self, size: int = -1) -> None:
        return None


def test_backends_refuse_the_same_calls(both):
    def outcome(module, call):
        try:
            return "ok", repr(call(module))
        except Exception as e:
            return type(e).__name__, str(e)

    native, pure = both
    for name, call in _CALLS.items():
        assert outcome(native, call) == outcome(pure, call), name


def test_classes_are_final_sessions_come_from_a_store_and_objects_take_no_attributes(both):
    for module in both:
        for cls in (module.FrameDecoder, module.Terminal, module.Sessions, module.Session):
            with pytest.raises(TypeError, match="is not an acceptable base type"):
                type("Mine", (cls,), {})
        with pytest.raises(TypeError, match=r"^cannot create '.*Session' instances$"):
            module.Session()
        for obj in (
            module.FrameDecoder(),
            module.Terminal(),
            module.Sessions(),
            _store(module)["s"],
        ):
            with pytest.raises(AttributeError):
                obj.extra = 1


def test_a_shared_frame_decoder_counts_every_byte_of_two_feeding_threads(both):
    # The native decoder holds the GIL through a feed; the pure one takes turns with a lock.
    for module in both:
        decoder = module.FrameDecoder(raw=True)

        def feed(decoder=decoder):
            for _ in range(100):
                decoder.feed(b'{"a":1}\n' * 500)

        threads = [threading.Thread(target=feed) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert (decoder.position, decoder.frames) == (2 * 100 * 500 * 8, 2 * 100 * 500)


def test_reset_takes_only_the_snapshot(both):
    for module in both:
        parameters = inspect.signature(module.Terminal().reset).parameters
        assert list(parameters) == ["snapshot"], module


def test_live_objects_refuse_copy_and_pickle(both):
    # A copy would share a lock and a stream read half-way: both backends refuse, alike.
    for module in both:
        for make in (
            module.FrameDecoder,
            module.Terminal,
            module.Sessions,
            lambda m=module: _store(m)["s"],
        ):
            obj = make()
            name = type(obj).__name__
            for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
                with pytest.raises(TypeError, match=f"^cannot pickle 'acpwire.{name}' object$"):
                    attempt(obj)


@needs_native
def test_stub_lists_the_native_api():
    import acpwire._native as native

    stub = (resources.files("acpwire") / "_native.pyi").read_text()
    for name in ("FrameDecoder", "loads", "dumps", "FrameError", "DecodeError", "EncodeError"):
        assert hasattr(native, name)
        assert name in stub
    assert (resources.files("acpwire") / "py.typed").is_file()


@needs_native
def test_the_pure_backend_has_every_name_of_the_extension():
    # The stub's promise: `acpwire._pure` provides the names `acpwire._native` does.
    import acpwire._native as native
    import acpwire._pure as pure

    names = {n for n in dir(native) if not n.startswith("__") or n == "__version__"}
    assert names <= set(dir(pure)), sorted(names - set(dir(pure)))
    assert set(native.__all__) == set(pure.__all__)
    assert pure.__version__ == native.__version__ == acpwire.__version__
    assert pure._build == "pure Python"


def cli(*args: str, stdin: bytes | None = None, backend: str | None = None):
    env = dict(os.environ)
    if backend:
        env["ACPWIRE_BACKEND"] = backend
    return subprocess.run(
        [sys.executable, "-m", "acpwire", *args],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("backend_name", [pytest.param("native", marks=needs_native), "pure"])
def test_check_on_the_embedded_sample(backend_name):
    result = cli("check", "--json", backend=backend_name)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    data = (resources.files("acpwire") / "data" / "sample-v2.ndjson").read_bytes()
    lines = [json.loads(line) for line in data.splitlines() if line.strip()]
    updates = [
        m["params"]["update"]["sessionUpdate"] for m in lines if m.get("method") == "session/update"
    ]
    assert report["backend"] == backend_name
    assert report["bytes"] == len(data)
    assert report["messages"] == len(lines)
    assert report["methods"]["session/update"] == len(updates)
    assert report["session_updates"] == {k: updates.count(k) for k in set(updates)}
    assert report["errors"] == []
    text = cli("check", backend=backend_name)
    assert text.returncode == 0
    out = text.stdout.decode()
    assert "MB/s" in out and "session/update" in out and "no bad frames" in out


def test_check_reports_bad_frames_and_exits_1(tmp_path):
    trace = tmp_path / "t.ndjson"
    trace.write_bytes(
        b'{"jsonrpc":"2.0","method":"session/update","params":{"update":'
        b'{"sessionUpdate":"agent_message_chunk"}}}\n{oops\n\xff\n'
    )
    result = cli("check", str(trace))
    assert result.returncode == 1
    out = result.stdout.decode()
    assert "line 2, byte 104: invalid JSON" in out
    assert "line 3, byte 110: invalid UTF-8" in out
    assert "agent_message_chunk" in out
    piped = cli("check", "-", stdin=trace.read_bytes())
    assert piped.returncode == 1 and b"2 bad frame(s)" in piped.stdout


def test_check_missing_file_exits_2(tmp_path):
    result = cli("check", str(tmp_path / "nope.ndjson"))
    assert result.returncode == 2
    assert b"cannot read" in result.stderr


@pytest.mark.parametrize("value", ["0", "-5", "ten"])
def test_check_refuses_a_bad_frame_limit_as_a_usage_error(value):
    result = cli("check", "--max-frame-bytes", value)
    assert result.returncode == 2
    assert b"argument --max-frame-bytes" in result.stderr
    assert b"Traceback" not in result.stderr


@pytest.mark.skipif(os.name != "posix", reason="closes a POSIX file descriptor")
def test_check_of_a_closed_standard_input_exits_2():
    result = subprocess.run(
        [sys.executable, "-m", "acpwire", "check", "-"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        # Standard input closed in the child, as `acpwire check - <&-` does.
        preexec_fn=lambda: os.close(0),
    )
    assert result.returncode == 2, result.stderr
    assert b"cannot read -: standard input is closed" in result.stderr
    assert b"Traceback" not in result.stderr


@pytest.mark.skipif(os.name != "posix", reason="needs SIGPIPE semantics")
def test_check_stops_quietly_when_its_reader_goes_away(tmp_path):
    # Enough output that the pipe's buffer fills before the reader (who reads nothing) quits.
    trace = tmp_path / "bad.ndjson"
    trace.write_bytes(b"{oops\n" * 50_000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "acpwire", "check", str(trace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=300) == 128 + 13
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr


@pytest.mark.skipif(os.name != "posix", reason="needs SIGPIPE semantics")
@pytest.mark.parametrize("command", [["check", "--json"], ["stats", "--json"], ["replay"]])
def test_a_large_write_to_a_reader_that_stops_part_way_ends_with_141(tmp_path, command):
    # One write of megabytes to a pipe whose reader takes a little and quits is cut short
    # without an error from Python's buffered writer: the rest must not be dropped silently.
    update = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": "x" * 200},
            },
        },
    }
    lines = []
    for i in range(20_000):
        update["params"]["sessionId"] = f"s{i}"
        update["method"] = f"m{i}" if command[0] == "check" else "session/update"
        lines.append(json.dumps(update))
    trace = tmp_path / "big.ndjson"
    trace.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "acpwire", *command, str(trace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(10)
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=300) == 128 + 13, stderr
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr


def test_help_and_version():
    assert b"check" in cli("--help").stdout
    assert cli("--version").stdout.startswith(b"acpwire ")
    assert cli().returncode == 2


@pytest.mark.skipif(
    not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="needs a free-threaded CPython"
)
def test_free_threaded_interpreter_keeps_the_gil_for_the_extension():
    # The extension declares that it uses the GIL: importing it turns the GIL back on.
    script = "import sys, acpwire._native; print(sys._is_gil_enabled())"
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHON_GIL"},
    )
    assert result.stdout.strip() == "True"


@needs_native
def test_stubtest_agrees_with_the_extension():
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "acpwire._native"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_type_checkers_see_the_typed_api(tmp_path):
    pytest.importorskip("mypy")
    good = tmp_path / "good.py"
    good.write_text(
        "import acpwire\n"
        "d = acpwire.FrameDecoder(max_frame_bytes=10)\n"
        "frames: list = d.feed(b'{}\\n')\n"
        "text: str = acpwire.Terminal(cols=80).text\n"
        "count: int = acpwire.Sessions().feed(b'')\n"
    )
    bad = tmp_path / "bad.py"
    bad.write_text("import acpwire\nnumber: int = acpwire.Terminal().text\n")
    run = [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "c")]
    ok = subprocess.run([*run, str(good)], capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout
    wrong = subprocess.run([*run, str(bad)], capture_output=True, text=True, check=False)
    assert wrong.returncode == 1 and "Incompatible types in assignment" in wrong.stdout
