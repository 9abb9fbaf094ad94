"""The app's background work (ui/jobs.py) on a real project: uploads and messages answered in the order the
PM gave them, whatever the page does meanwhile; a stopped reply records nothing; retry and edit take the
last reply back first."""

from __future__ import annotations

import time

from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from pmforge.surfaces.ui import jobs as jobs_module
from pmforge.surfaces.ui.jobs import DONE, FAILED, STOPPED, ProjectJobs, TurnJob, UploadJob, paced

PLAN = (b"# Pilot plan\n\n## Scope\n\nThe pilot covers 20 stores in the Midwest region for eight weeks.\n\n"
        + b"".join(b"## Store %d\n\nStore %d reports bakery shrink of %d percent, mostly from late markdowns.\n\n"
                   % (i, i, i % 9 + 2) for i in range(60)))


def _until(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def test_a_message_sent_during_an_upload_is_kept_and_answered_after_it(real_embedder, project: Project):
    jobs = ProjectJobs(project)
    upload = jobs.upload([("pilot-plan.md", PLAN)])
    message = jobs.send("How many stores are in the pilot?")  # while the file is still being prepared
    assert [j.status for j in jobs.active()] in (["running", "queued"], ["queued", "queued"])
    jobs.wait()
    assert upload.status == DONE and upload.files[0].result.ok
    assert message.status == DONE, message.error
    turns = project.state().turns
    assert [t.user for t in turns] == ["How many stores are in the pilot?"]
    # Answered after the upload: the reply could already search the new file, and cites it.
    assert any(s.filename == "pilot-plan.md" for s in turns[0].sources)
    assert "20 stores" in turns[0].assistant
    assert message.text.rstrip() == turns[0].assistant.rstrip()  # what streamed is what was saved
    assert {type(j) for j in jobs.take_finished()} == {UploadJob, TurnJob} and not jobs.take_finished()


def test_uploads_report_progress_in_passages(project: Project, monkeypatch):
    jobs = ProjectJobs(project)
    seen: list[tuple[str, int, int]] = []

    def recording(project, name, data, report):  # every report the page could poll, in order
        def both(stage: str, done: int, total: int) -> None:
            report(stage, done, total)
            f = job.files[0]
            seen.append((f.stage, f.done, f.total))
        return ingest_file(project, name, data, both)

    monkeypatch.setattr(jobs_module, "ingest_file", recording)
    job = jobs.upload([("pilot-plan.md", PLAN)])
    jobs.wait()
    embedding = [(d, t) for stage, d, t in seen if stage == "Embedding"]
    passages = job.files[0].result.entry.chunk_count
    assert embedding and {t for _, t in embedding} == {passages}
    assert [d for d, _ in embedding] == sorted(d for d, _ in embedding) and embedding[-1][0] == passages
    assert job.files[0].data == b""  # the bytes are in the workspace now, not held twice


def test_a_stopped_reply_records_nothing(project: Project):
    jobs = ProjectJobs(project, reveal_s=30.0)  # shown slowly enough to stop halfway
    job = jobs.send("We want to cut bakery shrink in our stores by a third.")
    _until(lambda: len(job.text) > 10)
    jobs.stop(job)
    jobs.wait()
    assert job.status == STOPPED
    assert project.state().turn_count == 0
    assert not project.ws.transcript_path.exists() or project.ws.transcript_path.read_bytes() == b""


def test_a_queued_message_can_be_stopped_before_it_starts(project: Project):
    jobs = ProjectJobs(project)
    jobs.upload([("pilot-plan.md", PLAN)])
    queued = jobs.send("Never mind this one.")
    jobs.stop(queued)
    assert queued.status == STOPPED and not queued.active
    jobs.wait()
    assert project.state().turn_count == 0


def test_retry_and_edit_take_the_last_reply_back_first(project: Project):
    jobs = ProjectJobs(project)
    jobs.send("We want to cut bakery shrink in our stores by a third.")
    jobs.wait()
    first = project.state().turns[-1]
    jobs.send(first.user, replaces=first.id)  # retry: the same words again
    jobs.wait()
    retried = project.state().turns
    assert len(retried) == 1 and retried[0].id != first.id and retried[0].user == first.user
    edit = jobs.send("We want to cut produce shrink instead.", replaces=retried[0].id)
    jobs.wait()
    assert edit.status == DONE, edit.error
    assert [t.user for t in project.state().turns] == ["We want to cut produce shrink instead."]


def test_a_stale_retry_is_refused_in_one_sentence(project: Project):
    jobs = ProjectJobs(project)
    jobs.send("We want to cut bakery shrink.")
    jobs.wait()
    first = project.state().turns[-1]
    jobs.send("The VP of stores owns it.")
    jobs.wait()
    stale = jobs.send(first.user, replaces=first.id)  # e.g. clicked in an older tab
    jobs.wait()
    assert stale.status == FAILED and stale.error == "Only Forge's latest reply can be asked again or edited."
    assert project.state().turn_count == 2


def test_a_large_reply_is_shown_word_by_word_and_a_small_piece_as_it_comes():
    pieces = list(paced(["Hello", " there, this reply arrived in one piece from the interviewer."], 0.01))
    assert pieces[0] == "Hello" and len(pieces) > 5 and "".join(pieces) == (
        "Hello there, this reply arrived in one piece from the interviewer.")
