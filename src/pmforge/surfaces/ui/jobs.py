"""The app's work for one project — uploads and messages — done by a background thread in the order the PM
asked for it.

Streamlit stops a script run whenever the PM clicks or types, so work done inside a run is lost halfway (an
upload restarted from zero, a message typed during it vanished). Here a run only hands work over and shows
its progress; the thread finishes it whatever the page does. A message sent during an upload or a reply
waits its turn and is answered after it. Nothing here imports Streamlit.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator, TypeVar
from uuid import uuid4

from pmforge.core.errors import ForgeError
from pmforge.core.models import SourceRef
from pmforge.ingest.pipeline import IngestResult, ingest_file
from pmforge.project.project import Project
from pmforge.project.undo import undo_last_turn
from pmforge.turn.orchestrator import start_turn

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED, STOPPED = "queued", "running", "done", "failed", "stopped"


@dataclass(eq=False)
class Job:
    id: str = field(default_factory=lambda: uuid4().hex[:10])
    status: str = QUEUED
    error: str = ""

    @property
    def active(self) -> bool:
        return self.status in (QUEUED, RUNNING)


@dataclass(eq=False)
class FileProgress:
    name: str
    data: bytes = field(repr=False, default=b"")
    stage: str = ""       # the pipeline's stage: Converting, Chunking, Summarizing, Embedding, Saving
    done: int = 0         # passages embedded so far (Embedding), else 0
    total: int = 0
    result: IngestResult | None = None


@dataclass(eq=False)
class UploadJob(Job):
    files: list[FileProgress] = field(default_factory=list)


@dataclass(eq=False)
class TurnJob(Job):
    message: str = ""
    replaces: str = ""    # the id of the last turn this message takes back first (retry, edit), or ""
    text: str = ""        # the reply so far, as the page should show it
    sources: list[SourceRef] = field(default_factory=list)
    stop_asked: bool = False
    started_at: float = 0.0  # time.monotonic() when Forge began answering it (0: not yet)

    def waiting_s(self) -> float:
        """How long Forge has been answering without a word to show yet."""
        return time.monotonic() - self.started_at if self.started_at and not self.text else 0.0


AnyJob = UploadJob | TurnJob  # what the queue holds
J = TypeVar("J", UploadJob, TurnJob)


# A reply that arrives in one piece (the offline interviewer) is shown word by word over at most this long;
# a streamed one (Claude) comes in small pieces already and is shown as it comes.
REVEAL_S = 0.4
WORD_DELAY_MAX_S = 0.015
_WORD = re.compile(r"\S+\s*|\s+")


def paced(chunks: Iterable[str], reveal_s: float = REVEAL_S) -> Iterator[str]:
    """The chunks again, a large one cut into words given out over `reveal_s` at most: reading starts as
    soon as the first words exist, and a short reply is not slowed to a crawl."""
    for chunk in chunks:
        words = _WORD.findall(chunk)
        if len(words) <= 3:
            yield chunk
            continue
        delay = min(WORD_DELAY_MAX_S, reveal_s / len(words))
        for word in words:
            yield word
            time.sleep(delay)


class ProjectJobs:
    """One project's queue of work and the thread that does it (started when there is work, gone when not)."""

    def __init__(self, project: Project, reveal_s: float = REVEAL_S):
        self.project = project
        self.reveal_s = reveal_s
        self._lock = threading.Lock()
        self._jobs: list[AnyJob] = []
        self._thread: threading.Thread | None = None

    # ---- handing work over (from a script run)
    def upload(self, files: list[tuple[str, bytes]]) -> UploadJob:
        return self._add(UploadJob(files=[FileProgress(name, data) for name, data in files]))

    def send(self, message: str, replaces: str = "") -> TurnJob:
        return self._add(TurnJob(message=message, replaces=replaces))

    def stop(self, job: TurnJob) -> None:
        """Stop a reply: nothing of it is recorded. A queued message is simply dropped."""
        with self._lock:
            job.stop_asked = True
            if job.status == QUEUED:
                job.status = STOPPED

    def _add(self, job: J) -> J:
        with self._lock:
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=f"forge-{self.project.ws.slug}",
                                                daemon=True)
                self._thread.start()
        return job

    # ---- what the page shows
    def active(self) -> list[AnyJob]:
        """Work waiting or under way, in the order it was asked for."""
        with self._lock:
            return [j for j in self._jobs if j.active]

    def preparing(self) -> list[FileProgress]:
        """The uploaded files not ready yet, in the order they were given."""
        with self._lock:
            return [f for j in self._jobs if isinstance(j, UploadJob) and j.active for f in j.files if f.result is None]

    def take_finished(self) -> list[AnyJob]:
        """Work finished since the last call, to be reported once."""
        with self._lock:
            finished = [j for j in self._jobs if not j.active]
            self._jobs = [j for j in self._jobs if j.active]
            return finished

    def wait(self, timeout: float = 120.0) -> None:
        """Until the queue is empty and the thread has finished what it was doing (remembering a reply)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                thread = self._thread
            if thread is None:
                return
            thread.join(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                raise TimeoutError("the background work did not finish in time")

    # ---- the thread
    def _next(self) -> AnyJob | None:
        with self._lock:
            job = next((j for j in self._jobs if j.status == QUEUED), None)
            if job is None:
                self._thread = None  # decided under the lock: work added after this starts a new thread
            else:
                job.status = RUNNING
            return job

    def _work(self) -> None:
        while (job := self._next()) is not None:
            try:
                if isinstance(job, UploadJob):
                    self._upload(job)
                else:
                    self._answer(job)
            except ForgeError as exc:
                job.error = str(exc)
                job.status = FAILED
            except Exception:  # the thread must go on with the rest of the queue whatever one job does
                log.exception("background job %s failed", job.id)
                job.error = "Forge hit an unexpected error; the details are in the log (logs/forge.log)."
                job.status = FAILED

    def _upload(self, job: UploadJob) -> None:
        for f in job.files:
            def report(stage: str, done: int, total: int, f: FileProgress = f) -> None:
                f.stage, f.done, f.total = stage, done, total

            f.result = ingest_file(self.project, f.name, f.data, report)
            f.data = b""  # the bytes are in the workspace now (or refused): do not keep a second copy
        job.status = DONE

    def _answer(self, job: TurnJob) -> None:
        project = self.project
        with project.ws.turn_slot(project.settings.chat_busy_wait_s):  # one message at a time per project
            if job.stop_asked:
                job.status = STOPPED
                return
            job.started_at = time.monotonic()
            retracted = ""
            if job.replaces:
                turns = project.state().turns
                if not turns or turns[-1].id != job.replaces:  # another window answered a message since
                    raise ForgeError("Only Forge's latest reply can be asked again or edited.")
                if turns[-1].user == job.message:  # asked again as it was: the new reply asks differently
                    retracted = turns[-1].assistant
                undo_last_turn(project, job.replaces)
            pending = start_turn(project, job.message, retracted)
            job.sources = pending.sources()
            stream = iter(pending)
            try:
                for piece in paced(stream, self.reveal_s):
                    if job.stop_asked:
                        job.status = STOPPED
                        return
                    job.text += piece
            finally:
                stream.close()  # a stopped reply lets go of its HTTP stream now
            pending.commit()
            job.status = DONE  # the page may show the saved turn now; remembering it follows
            pending.remember()
