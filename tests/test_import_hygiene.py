"""The ground floors (engine/, adapters/) never import Textual: checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = r"""
import importlib, json, pkgutil, sys
imported, skipped = [], []
for package_name in ("engine", "adapters"):
    package = importlib.import_module(package_name)
    names = [package_name] + [
        info.name for info in pkgutil.walk_packages(package.__path__, package_name + ".")
    ]
    for name in names:
        try:
            importlib.import_module(name)
            imported.append(name)
        except ImportError as exc:  # an optional dependency of one adapter
            if (exc.name or "").split(".")[0] in ("engine", "adapters"):
                raise
            skipped.append(f"{name}: {exc}")
print(json.dumps({
    "imported": imported,
    "skipped": skipped,
    "textual": sorted(m for m in sys.modules if m == "textual" or m.startswith("textual.")),
}))
"""


def test_engine_and_adapters_import_no_textual() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert "engine.api" in report["imported"] and "adapters.base" in report["imported"]
    assert report["textual"] == [], f"Textual imported below the UI: {report['textual'][:5]}"
