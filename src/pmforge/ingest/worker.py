"""One conversion in its own process: `python -m pmforge.ingest.worker JOB < upload > reply`.

A hostile upload can make a converter run for minutes or allocate gigabytes. Run here, the work has
an address-space limit (set before anything heavy is imported) and the parent kills it at its time
limit (`convert.run_in_worker`), so Forge itself stays responsive and a refused file costs at most the
budget. JOB is JSON: {"task", "filename", "max_chars", "memory_mb"}. The reply, on stdout, is JSON:
{"markdown", "note"}, or {"refused": one sentence}, or {"failed": "parse" | "memory" | "too_much_text"}.
"""

from __future__ import annotations

import json
import sys


def _limit_memory(megabytes: int) -> None:
    try:
        import resource

        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # not every platform lets a process cap its address space
        pass


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    _limit_memory(int(job["memory_mb"]))
    reply_to = sys.stdout.buffer
    sys.stdout = sys.stderr  # a converter's print() must not corrupt the reply
    data = sys.stdin.buffer.read()
    reply_to.write(json.dumps(run(job, data)).encode("ascii"))
    reply_to.flush()
    return 0


def run(job: dict, data: bytes) -> dict:
    # Imported here, after the memory limit is set: the converters' libraries count against it.
    import pmforge.ingest.convert as convert
    from pmforge.core.errors import ForgeError

    try:
        converted = convert.TASKS[job["task"]](job["filename"], data, int(job["max_chars"]))
    except ForgeError as exc:
        return {"refused": str(exc)}
    except convert.TooMuchText:
        return {"failed": "too_much_text"}
    except MemoryError:
        return {"failed": "memory"}
    except Exception as exc:  # damaged files raise anything: zip, XML, converter and encoding errors
        return {"failed": "parse", "detail": type(exc).__name__}
    return {"markdown": converted.markdown, "note": converted.note}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
