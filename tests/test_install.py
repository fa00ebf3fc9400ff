"""``python -m adapters.local.install`` (``make agents``): its command line, offline (nothing is installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adapters.local import install
from adapters.local.install import parse_agents

ROOT = Path(__file__).resolve().parent.parent


def test_no_argument_means_every_agent() -> None:
    # Python 3.11's argparse rejected the empty list of a nargs="*" positional with choices ("invalid choice: []")
    assert parse_agents([]) == ["hermes", "openclaw", "letta"]


def test_named_agents_in_order_without_repeats() -> None:
    assert parse_agents(["openclaw"]) == ["openclaw"]
    assert parse_agents(["openclaw", "hermes", "openclaw"]) == ["openclaw", "hermes"]


def test_an_unknown_agent_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_agents(["hermes", "bogus"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


def test_main_installs_what_was_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    done: list[str] = []
    monkeypatch.setattr(install, "install_sandbox", lambda: "bwrap")
    monkeypatch.setattr(install, "install_hermes", lambda: done.append("hermes"))
    monkeypatch.setattr(install, "install_openclaw", lambda: done.append("openclaw"))
    monkeypatch.setattr(install, "install_letta", lambda: done.append("letta"))
    assert install.main([]) == 0
    assert install.main(["hermes"]) == 0
    assert install.main(["letta", "hermes"]) == 0
    assert done == ["hermes", "openclaw", "letta", "hermes", "letta", "hermes"]


def test_main_reports_a_failed_step(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail() -> None:
        raise install.AdapterError("install step failed: npm i")

    monkeypatch.setattr(install, "install_openclaw", fail)
    monkeypatch.setattr(install, "install_sandbox", lambda: "bwrap")
    assert install.main(["openclaw"]) == 1
    assert "[mmb] install step failed" in capsys.readouterr().err


def test_the_module_command_line_parses_without_arguments() -> None:
    # the real entry point, as `make agents` runs it; --help exits before installing anything
    done = subprocess.run(
        [sys.executable, "-m", "adapters.local.install", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0 and "hermes, openclaw, letta" in done.stdout


def test_a_missing_sandbox_it_cannot_install_is_one_line_saying_how(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(install.shutil, "which", lambda name: None)  # no bwrap, no apt-get
    monkeypatch.setattr(install, "install_hermes", lambda: pytest.fail("installed without a sandbox"))
    assert install.main(["hermes"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "bubblewrap" in err and "apt-get install bubblewrap" in err and '"agent_sandbox": "none"' in err


def test_make_run_says_it_installs_before_the_minutes_it_takes(tmp_path: Path) -> None:
    """``make run`` on a fresh clone: a line first, then the venv and the pip installs (issue 25, point 11)."""
    plan = subprocess.run(
        ["make", "-n", f"VENV={tmp_path / 'venv'}", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    first = next(i for i, line in enumerate(plan) if "[mmb] installing dependencies" in line)
    assert "first run only, a few minutes" in plan[first]
    assert first < next(i for i, line in enumerate(plan) if "-m venv" in line)


def test_an_agents_install_on_a_node_builds_the_clock_and_shrugs_off_what_it_cannot_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HermesAdapter.install`` / ``OpenClawAdapter.install`` (a Ray node before a run plays there) build the
    virtual clock ahead; a node without a sandbox or a compiler still installs, and the run that needs them says
    how to get them."""
    from adapters.hermes.adapter import HermesAdapter

    monkeypatch.setenv("MMB_AGENTS_DIR", str(tmp_path / "agents"))
    monkeypatch.setattr("adapters.hermes.adapter.install_hermes", lambda: None)
    monkeypatch.setattr(install, "install_sandbox", lambda: "bwrap")
    HermesAdapter.install()
    assert [p.name for p in (tmp_path / "agents").glob("virtual-clock-*/*")] == [install.CLOCK_LIBRARY]

    def no_sandbox() -> str:
        raise install.AdapterError("no bwrap")

    monkeypatch.setenv("MMB_AGENTS_DIR", str(tmp_path / "bare"))
    monkeypatch.setenv("CC", "false")
    monkeypatch.setattr(install, "install_sandbox", no_sandbox)
    HermesAdapter.install()  # no error: neither is needed by every run
    assert not list((tmp_path / "bare").glob("virtual-clock-*/*"))
