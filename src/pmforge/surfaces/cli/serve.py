"""`forge ui`: the app, served until it is stopped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def serve_until_stopped(command: list[str], grace_s: float) -> int:
    """Run a server as a child that never outlives this process: a stop signal sent to `forge` (a service
    manager's SIGTERM, Ctrl-C, a closed terminal's SIGHUP) is passed on, then `forge` waits for the server
    to stop, killing it if it takes longer than `grace_s`. Returns the server's exit status."""
    import signal
    import time

    child = subprocess.Popen(command, env=dict(os.environ))
    stop_asked: list[float] = []

    def pass_on(signum, _frame) -> None:
        stop_asked.append(time.monotonic())
        if child.poll() is None:  # a hang-up becomes a polite stop: Streamlit shuts down on SIGTERM
            child.send_signal(signal.SIGTERM if signum == getattr(signal, "SIGHUP", None) else signum)

    stop_signals = [getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)]
    previous = {signum: signal.signal(signum, pass_on) for signum in stop_signals}
    try:
        while True:
            try:
                code = child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if stop_asked and time.monotonic() - stop_asked[0] > grace_s:
                    child.kill()
    finally:
        if child.poll() is None:  # this process is leaving for another reason (an error): so does the server
            child.kill()
            child.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 - code if code < 0 else code  # killed by a signal: the shell's 128+N


def cmd_ui(args) -> int:
    import math

    from pmforge.core.settings import get_settings

    app = Path(__file__).resolve().parent.parent / "app.py"  # surfaces/app.py, beside this package
    command = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.port", str(args.port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.address", args.address,
        # The uploader refuses what ingestion would refuse anyway.
        "--server.maxUploadSize", str(max(1, math.ceil(get_settings().max_upload_mb))),
        "--client.toolbarMode", "minimal",
        "--runner.magicEnabled", "false",  # a bare expression in app code must never render as a widget
    ]
    return serve_until_stopped(command, get_settings().ui_stop_grace_s)
