"""The fixtures of the Ray mirror's link tests: ``host`` (a folder and a 0600 file of the host) and ``opened``
(every ``os.open`` of the test, as the kernel names it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mirror_helpers import HOST_MEMORY, SECRET, Host, _contents


@pytest.fixture
def host(tmp_path: Path) -> Host:
    folder = tmp_path / "host"
    (folder / "notes").mkdir(parents=True)
    (folder / "MEMORY.md").write_bytes(HOST_MEMORY)
    (folder / "notes" / "deep.md").write_bytes(SECRET)
    secret = tmp_path / "host-secret.txt"
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    return Host(folder, secret, _contents(folder))


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What every ``os.open`` of the test reached, as the kernel names it (no path under the host's may
    appear: not even opened)."""
    real, reached = os.open, []

    def spy(path: object, flags: int, *args: object, **kwargs: object) -> int:
        fd = real(path, flags, *args, **kwargs)  # type: ignore[arg-type]
        reached.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd

    monkeypatch.setattr(os, "open", spy)
    return reached
