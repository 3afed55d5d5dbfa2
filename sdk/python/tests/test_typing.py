"""The package type-checks under mypy --strict (its settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", "/dev/null", "--config-file", str(root / "pyproject.toml")],
                       cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
