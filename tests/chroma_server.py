"""A real Chroma server for the tests: `chroma run --host 127.0.0.1` on a free port, stopped afterwards (and the
free port and the stop that the tests' other local servers use too)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(process: subprocess.Popen, grace_s: float = 20) -> None:
    """Stop a server the tests started: SIGTERM, then SIGKILL if it is still running after `grace_s`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def chroma_command() -> str:
    beside_python = Path(sys.executable).with_name("chroma")
    return str(beside_python) if beside_python.exists() else (shutil.which("chroma") or "chroma")


class ChromaServer:
    def __init__(self, path: Path, port: int | None = None):
        self.path = Path(path)
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> "ChromaServer":
        self.path.mkdir(parents=True, exist_ok=True)
        log = open(self.path.parent / f"chroma-{self.port}.log", "ab")
        self.process = subprocess.Popen(
            [chroma_command(), "run", "--path", str(self.path), "--host", self.host, "--port", str(self.port)],
            stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.process.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(f"http://{self.host}:{self.port}/api/v2/heartbeat", timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer within {timeout} s")

    def stop(self) -> None:
        if self.process:
            stop_process(self.process)
        self.process = None

    def __enter__(self) -> "ChromaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
