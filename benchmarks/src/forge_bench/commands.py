"""`forge bench` and `forge eval`: figures, never assertions. `register` adds them to the `forge` command
(through the `pmforge.commands` entry point this part declares)."""

from __future__ import annotations

import json
from pathlib import Path

from pmforge.core.errors import ForgeError


def cmd_bench(args) -> int:
    if args.what == "ingest":
        from forge_bench.bench.ingest import bench_ingest

        figures = bench_ingest(words=args.words)
    elif args.what == "recall":
        from forge_bench.bench.recall import bench_recall

        figures = bench_recall(turns=args.turns or 360, retriever=args.retriever)
    elif args.what == "rerun":
        from forge_bench.bench.rerun import bench_rerun

        figures = bench_rerun(turns=args.turns or 300, files=args.files)
    elif args.what == "soak":
        from forge_bench.bench.soak import bench_soak

        figures = bench_soak(turns=args.turns or 1000, operations=args.ops)
    elif args.what == "understand":
        from forge_bench.bench.understand import bench_understand

        figures = bench_understand(Path(args.dir))
    elif args.what == "local":
        from forge_bench.bench.local import bench_local

        figures = bench_local(turns=args.turns or 10)
    elif args.what == "cli":
        from forge_bench.bench.cli import bench_cli

        figures = bench_cli(turns=args.turns or 8)
    elif args.what == "latency":
        from forge_bench.bench.latency import bench_latency

        figures = bench_latency(chunks=args.chunks, turns=args.turns or 1000)
    elif args.what == "cost":
        from forge_bench.bench.cost import bench_cost, markdown

        figures = bench_cost(turns=args.turns or 100)
        if not args.json:  # the README's block, as printed
            print(markdown(figures))
            return 0
    elif args.what == "ui":
        from forge_bench.bench.ui import bench_ui, format_table

        figures = bench_ui(turns=args.turns or 10)
        if not args.json:  # a short table for a person; --json for scripts
            print(format_table(figures))
            return 0
    else:
        from forge_bench.bench.prompt import bench_prompt

        figures = bench_prompt(args.turns or 100, chart=Path(args.chart) if args.chart else None,
                               workload=args.workload)
        if not args.json:
            figures.pop("series")
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))
    return 0


def cmd_eval(args) -> int:
    from forge_bench import evaluation
    from pmforge.core.settings import get_settings
    settings = get_settings()
    if args.what == "sessions":
        return _eval_sessions(args, settings)
    if args.what == "answers":
        from forge_bench.answer_eval import evaluate_answers
        if not args.dir:
            raise ForgeError("forge eval answers needs --dir DIR (the files and questions.jsonl).")
        figures = evaluate_answers(Path(args.dir), settings)
        if not args.json:
            figures = {k: v for k, v in figures.items() if k != "missed"} | {"missed": len(figures["missed"])}
    elif args.what == "docs":
        if not (args.corpus and args.questions):
            raise ForgeError("forge eval docs needs --corpus DIR and --questions FILE.jsonl.")
        retriever = args.retriever or settings.document_retriever
        figures = evaluation.eval_docs(Path(args.corpus), Path(args.questions), args.k, retriever, settings,
                                       as_turn=args.as_turn, budget=args.budget)
    else:
        if not (args.conversation and args.questions):
            raise ForgeError("forge eval memory needs --conversation FILE.jsonl and --questions FILE.jsonl.")
        retriever = args.retriever or settings.conversation_retriever
        figures = evaluation.eval_memory(Path(args.conversation), Path(args.questions), args.k, retriever, settings,
                                         as_turn=args.as_turn, budget=args.budget)
    if args.json:
        print(json.dumps(figures))
    else:
        width = max(map(len, figures))
        for key, value in figures.items():
            print(f"{key:<{width}}  {value}")
    return 0


def _eval_sessions(args, settings) -> int:
    from forge_bench import session_eval
    if not args.dir:
        raise ForgeError("forge eval sessions needs --dir DIR (NAME.conversation.jsonl + NAME.gold.json files).")
    report = session_eval.evaluate_sessions(
        Path(args.dir), settings, only=args.only, keep=Path(args.keep) if args.keep else None
    )
    print(json.dumps(report, ensure_ascii=False) if args.json else session_eval.table(report))
    return 0


def register(sub) -> None:
    """Add `forge eval` and `forge bench` to the `forge` command's subparsers."""
    p = sub.add_parser("eval", help="measure retrieval or whole-session quality on a labelled set")
    p.add_argument("what", choices=["docs", "memory", "sessions", "answers"])
    p.add_argument("--corpus", help="docs: a folder of .md/.docx files")
    p.add_argument("--conversation", help="memory: JSONL rows {id, role, text}")
    p.add_argument("--questions", help="JSONL questions with references (docs) or evidence (memory)")
    p.add_argument("-k", type=int, default=4, help="sections or turns retrieved per question")
    p.add_argument("--retriever", default=None, help="vector, bm25 or hybrid (default: the app's setting)")
    p.add_argument("--as-turn", action="store_true",
                   help="docs/memory: score what a turn's prompt section really shows (query, packing, budget)")
    p.add_argument("--budget", type=int, default=None, metavar="TOKENS",
                   help="with --as-turn: the documents or conversations section budget (default: the app's)")
    p.add_argument("--dir", help="sessions: a folder of NAME.conversation.jsonl + NAME.gold.json; answers: the files "
                                 "and questions.jsonl")
    p.add_argument("--only", metavar="NAME", help="sessions: run this one session")
    p.add_argument("--keep", metavar="DIR", help="sessions: keep the scratch projects in DIR for inspection")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("bench", help="print performance figures")
    p.add_argument("what", choices=["cli", "cost", "ingest", "local", "prompt", "recall", "latency", "rerun", "soak",
                                    "understand", "ui"])
    p.add_argument("--dir", default="benchmarks/sessions/dev", help="understand: a folder of discovery sessions")
    p.add_argument("--words", type=int, default=15_000, help="ingest: size of the generated report")
    p.add_argument("--turns", type=int,
                   help="cli (8), cost (100), local (10), prompt (100), recall (360), latency (1000), rerun (300), "
                        "soak (1000), ui (10): session length")
    p.add_argument("--ops", type=int, default=200, help="soak: random uploads, replacements and deletions")
    p.add_argument("--chunks", type=int, default=10_000, help="latency: document chunks in the store")
    p.add_argument("--files", type=int, default=50, help="rerun: files in the project")
    p.add_argument("--retriever", choices=["vector", "bm25", "hybrid"], help="recall: override the configured one")
    p.add_argument("--chart", help="prompt: write a PNG chart of the three curves here")
    p.add_argument("--workload", choices=["default", "heavy"], default="default",
                   help="prompt: 'heavy' = long messages, replies near the output cap, near-2,000-token document "
                        "sections and a long org context, every tool-loop round counted")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)
