"""`forge bench` and `forge eval`: figures, never assertions."""

from __future__ import annotations

import json
from pathlib import Path

from pmforge.core.errors import ForgeError


def cmd_bench(args) -> int:
    if args.what == "ingest":
        from pmforge.surfaces.bench.ingest import bench_ingest

        figures = bench_ingest(words=args.words)
    elif args.what == "recall":
        from pmforge.surfaces.bench.recall import bench_recall

        figures = bench_recall(turns=args.turns or 360, retriever=args.retriever)
    elif args.what == "rerun":
        from pmforge.surfaces.bench.rerun import bench_rerun

        figures = bench_rerun(turns=args.turns or 300, files=args.files)
    elif args.what == "soak":
        from pmforge.surfaces.bench.soak import bench_soak

        figures = bench_soak(turns=args.turns or 1000, operations=args.ops)
    elif args.what == "understand":
        from pmforge.surfaces.bench.understand import bench_understand

        figures = bench_understand(Path(args.dir))
    elif args.what == "cli":
        from pmforge.surfaces.bench.cli import bench_cli

        figures = bench_cli(turns=args.turns or 8)
    elif args.what == "latency":
        from pmforge.surfaces.bench.latency import bench_latency

        figures = bench_latency(chunks=args.chunks, turns=args.turns or 1000)
    elif args.what == "cost":
        from pmforge.surfaces.bench.cost import bench_cost, markdown

        figures = bench_cost(turns=args.turns or 100)
        if not args.json:  # the README's block, as printed
            print(markdown(figures))
            return 0
    elif args.what == "ui":
        from pmforge.surfaces.bench.ui import bench_ui, format_table

        figures = bench_ui(turns=args.turns or 10)
        if not args.json:  # a short table for a person; --json for scripts
            print(format_table(figures))
            return 0
    else:
        from pmforge.surfaces.bench.prompt import bench_prompt

        figures = bench_prompt(args.turns or 100, chart=Path(args.chart) if args.chart else None,
                               workload=args.workload)
        if not args.json:
            figures.pop("series")
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))
    return 0


def cmd_eval(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.surfaces import evaluation
    settings = get_settings()
    if args.what == "sessions":
        return _eval_sessions(args, settings)
    if args.what == "answers":
        from pmforge.surfaces.answer_eval import evaluate_answers
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
    from pmforge.surfaces import session_eval
    if not args.dir:
        raise ForgeError("forge eval sessions needs --dir DIR (NAME.conversation.jsonl + NAME.gold.json files).")
    report = session_eval.evaluate_sessions(
        Path(args.dir), settings, only=args.only, keep=Path(args.keep) if args.keep else None
    )
    print(json.dumps(report, ensure_ascii=False) if args.json else session_eval.table(report))
    return 0
