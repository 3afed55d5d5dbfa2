"""Fixtures: a real engram serve, built from this repository, on a free
loopback port with the shared vectors' keys and the static embedder."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "sdk" / "testvectors" / "vectors.json"


def load_vectors() -> dict[str, Any]:
    return json.loads(VECTORS.read_text())


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    return load_vectors()


@pytest.fixture(scope="session")
def engram_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """$ENGRAM_BIN, else engram built from the repository."""
    b = os.environ.get("ENGRAM_BIN")
    if b:
        return b
    if shutil.which("go") is None:
        pytest.fail("no $ENGRAM_BIN and no go to build engram with")
    out = tmp_path_factory.mktemp("bin") / "engram"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/engram"], cwd=REPO, check=True,
                   env={**os.environ, "CGO_ENABLED": "0"})
    return str(out)


class Server:
    """A running engram serve; stop() ends it by its PID."""

    def __init__(self, bin: str, keys: list[dict[str, Any]], embedder: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="engram-sdk-py-")
        keys_path = Path(self.dir) / "keys.json"
        keys_path.write_text(json.dumps({"keys": keys}))
        keys_path.chmod(0o600)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env["ENGRAM_EMBEDDER"] = embedder
        self.proc = subprocess.Popen(
            [bin, "--db", str(Path(self.dir) / "engram.db"), "serve", "--addr", "127.0.0.1:0",
             *(["--keys", str(keys_path)] if keys else [])],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = ""
        found = threading.Event()
        self.log: list[str] = []

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                if line.startswith("engram: serving ") and " on http://" in line and not found.is_set():
                    self.url = line.split(" on ", 1)[1].split()[0]
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(120):
            self.stop()
            raise RuntimeError("engram serve did not start: " + "".join(self.log))
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("engram serve is not ready: " + "".join(self.log))
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def vector_keys(v: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k["key"], "scope": k["scope"]} for k in v["keys"].values() if k.get("scope")]


@pytest.fixture
def server(engram_bin: str, vectors: dict[str, Any]) -> Iterator[Server]:
    """A fresh server with the vectors' keys and an empty store."""
    s = Server(engram_bin, vector_keys(vectors), vectors["embedder"])
    yield s
    s.stop()


@pytest.fixture
def key(vectors: dict[str, Any]) -> Any:
    return lambda name: vectors["keys"][name]["key"]
