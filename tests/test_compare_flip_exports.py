"""``mmb-tui compare --json`` and ``--checks-csv`` carry, per check, its flip rate across the row's repeats and the
memory-autopsy class of each failure (issue 33), the same figures the lines under the table print."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from engine_helpers import make_config, play

from engine.comparison.compare import main_compare

NOTEBOOK = "memory_agents:NotebookAgent"


async def test_the_json_export_gives_each_check_its_flip_rate_and_failure_classes(tmp_path: Path) -> None:
    def run(plan: str) -> dict[str, str]:
        return {"benchmark": "memory_autopsy", "agent": NOTEBOOK, "model": f"scripted/agent?plan={plan}"}

    runs = {"x.r1": run("save,skip"), "x.r2": run("save"), "x.r3": run("save,revert"), "y": run("save")}
    config = make_config(tmp_path, runs)
    for run_id in runs:
        await play(config, run_id)
    out, path, table = io.StringIO(), tmp_path / "compare.json", tmp_path / "checks.csv"
    assert main_compare(config, ["x", "y"], json_path=path, out=out, checks_csv_path=table) == 0
    rows = {row["name"]: row for row in json.loads(path.read_text(encoding="utf-8"))}
    checks = rows["x"]["checks"]
    assert checks["3.1"]["flip_rate"] == 2 / 3  # one right, two wrong: two pairs of three disagree
    assert checks["3.1"]["failures"] == {"never written": 1, "lost": 1}
    assert checks["3.3"]["flip_rate"] == 0.0 and checks["3.3"]["failures"] == {}
    assert all(c["runs"] == 3 for c in checks.values())  # the figures it had are kept
    lone = rows["y"]["checks"]["3.1"]
    assert lone["flip_rate"] is None and lone["failures"] == {}  # one run: no pair to disagree
    assert "3.1 flips 67%, failed 2: " in out.getvalue()  # the same figures as the lines printed
    with table.open(encoding="utf-8") as handle:
        csv_rows = {(row["name"], row["check_id"]): row for row in csv.DictReader(handle)}
    assert set(csv_rows) == {(name, check) for name in rows for check in rows[name]["checks"]}
    for (name, check), row in csv_rows.items():  # the JSON's figures, cell for cell
        figures = rows[name]["checks"][check]
        assert (int(row["runs"]), int(row["right"])) == (figures["runs"], figures["right"])
        rate = figures["flip_rate"]
        assert row["flip_rate"] == ("" if rate is None else f"{rate:.4f}")
        said = dict(part.split(":") for part in row["failures"].split("; ")) if row["failures"] else {}
        assert {k: int(v) for k, v in said.items()} == figures["failures"]
        assert row["pass^1"] == f"{figures['pass_k'][0]:.4f}"
    assert csv_rows[("x", "3.1")]["failures"] == "never written:1; lost:1"
    assert f"written: {table}" in out.getvalue()
