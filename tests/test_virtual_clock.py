"""The virtual clock (``adapters/local/virtual_clock.c``): a child process reads the offset file and moves with it,
monotonic time untouched; a threaded child that writes its environment survives it (libfaketime's did not)."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from adapters.base import AdapterError
from adapters.local.install import virtual_clock_library
from adapters.local.virtual_clock import OFFSET_ENV, VirtualClock, offset_for, offset_spec

CHILD = """
import sys, time
for line in sys.stdin:  # one sample per request line, taken after the request arrives
    print(f"{time.time():.0f} {time.monotonic():.3f}", flush=True)
"""


def test_offset_spec_and_offset_for() -> None:
    assert offset_spec(90000) == "+90000s"
    assert offset_spec(-30.4) == "-30s"
    assert offset_for("2026-01-02T00:00:00", now=datetime(2026, 1, 1)) == 86400
    with pytest.raises(ValueError, match="ISO"):
        offset_for("next tuesday")


# what Hermes does as it sets up a turn, at full speed: threads read the clock while others add and remove
# environment variables (libfaketime 3.0.1 crashed this in six runs out of six; the agent, once in ten starts)
STRESS = """
import os, sys, threading, time
sys.setswitchinterval(1e-5)  # many GIL hand-overs: each a timed condition wait (libfaketime: a getenv)
stop = time.monotonic() + float(sys.argv[1])
def writer(tag):
    i = 0
    while time.monotonic() < stop:
        os.environ[f"MMB_STRESS_{tag}_{i}"] = "x"
        i += 1
        if i == 2000:  # grown by one each time: glibc moves the array, a getenv beside it reads freed memory
            for key in [k for k in os.environ if k.startswith(f"MMB_STRESS_{tag}_")]:
                del os.environ[key]
            i = 0
def reader():
    while time.monotonic() < stop:
        time.time()
threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
threads += [threading.Thread(target=reader) for _ in range(3)]
for t in threads: t.start()
for t in threads: t.join()
print(f"{time.time():.0f}")
"""


def test_env_sets_the_recipe(tmp_path: Path) -> None:
    fake = VirtualClock(tmp_path / "faketime.rc")
    env = fake.env({"PATH": "/usr/bin", "LD_PRELOAD": "other.so"})
    assert env["LD_PRELOAD"] == f"{virtual_clock_library()} other.so"
    assert env[OFFSET_ENV] == str(tmp_path / "faketime.rc")
    assert (tmp_path / "faketime.rc").read_text().strip() == "+0s"


def test_the_library_is_built_once_per_source_and_says_when_it_cannot_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MMB_AGENTS_DIR", str(tmp_path / "agents"))
    built = virtual_clock_library()
    assert built.is_file() and built.parent.parent == tmp_path / "agents"
    assert (
        virtual_clock_library() == built
        and built.stat().st_mtime_ns == virtual_clock_library().stat().st_mtime_ns
    )
    assert [p.name for p in built.parent.iterdir()] == [built.name]  # no build leftovers
    built.unlink()
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(
        AdapterError, match=r"virtual time: .*no-such-cc.* virtual_clock.c.*\"virtual_time\": false"
    ):
        virtual_clock_library()
    monkeypatch.setenv("CC", "false")
    with pytest.raises(AdapterError, match=r"false could not build virtual_clock.c"):
        virtual_clock_library()
    assert [p.name for p in built.parent.iterdir()] == []


def test_a_threaded_child_writing_its_environment_survives_the_clock(tmp_path: Path) -> None:
    fake = VirtualClock(tmp_path / "faketime.rc")
    fake.write_offset(86400)
    done = subprocess.run([sys.executable, "-c", STRESS, "3"], env=fake.env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-500:]
    assert abs(float(done.stdout) - (time.time() + 86400)) < 30


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    fake = VirtualClock(tmp_path / "faketime.rc")
    for seconds in range(50):
        fake.write_offset(seconds)
    assert (tmp_path / "faketime.rc").read_text() == "+49s\n"
    assert [p.name for p in tmp_path.iterdir()] == ["faketime.rc"]


def test_child_process_clock_follows_the_offset_file(tmp_path: Path) -> None:
    fake = VirtualClock(tmp_path / "faketime.rc")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        env=fake.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:

        def sample() -> tuple[float, float]:
            child.stdin.write("\n")  # type: ignore[union-attr]
            child.stdin.flush()  # type: ignore[union-attr]
            wall, mono = child.stdout.readline().split()  # type: ignore[union-attr]
            return float(wall), float(mono)

        wall, mono = sample()
        assert abs(wall - time.time()) < 5
        fake.set_time("2031-03-14T09:30:00")
        time.sleep(fake.settle_delay())
        wall, mono_after = sample()
        expected = datetime(2031, 3, 14, 9, 30).timestamp()
        assert abs(wall - expected) < 5
        assert 0 <= mono_after - mono < 5  # monotonic time is not faked
        fake.write_offset(-86400)
        time.sleep(fake.settle_delay())
        wall, _ = sample()
        assert abs(wall - (time.time() - 86400)) < 5
    finally:
        child.kill()
        child.wait()
