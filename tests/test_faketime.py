"""libfaketime: a Python child process reads the offset file and moves with it, monotonic time untouched."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from adapters.faketime import FakeTime, library_path, offset_for, offset_spec

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


def test_env_sets_the_recipe(tmp_path: Path) -> None:
    fake = FakeTime(tmp_path / "faketime.rc")
    env = fake.env({"FAKETIME": "@2000-01-01 00:00:00", "PATH": "/usr/bin"})
    assert "FAKETIME" not in env
    assert env["LD_PRELOAD"] == str(library_path())
    assert env["FAKETIME_NO_CACHE"] == "1" and env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"
    assert (tmp_path / "faketime.rc").read_text().strip() == "+0s"


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    fake = FakeTime(tmp_path / "faketime.rc")
    for seconds in range(50):
        fake.write_offset(seconds)
    assert (tmp_path / "faketime.rc").read_text() == "+49s\n"
    assert [p.name for p in tmp_path.iterdir()] == ["faketime.rc"]


def test_child_process_clock_follows_the_offset_file(tmp_path: Path) -> None:
    fake = FakeTime(tmp_path / "faketime.rc")
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
        wall, mono_after = sample()
        expected = datetime(2031, 3, 14, 9, 30).timestamp()
        assert abs(wall - expected) < 5
        assert 0 <= mono_after - mono < 5  # monotonic time is not faked
        fake.write_offset(-86400)
        wall, _ = sample()
        assert abs(wall - (time.time() - 86400)) < 5
    finally:
        child.kill()
        child.wait()
