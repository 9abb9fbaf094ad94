"""The package's layers (pyproject.toml, [tool.importlinter]): every import runs down the data flow, never up
and never in a circle, and no import hides inside a function to dodge that rule."""

from __future__ import annotations

import ast
from pathlib import Path

from importlinter.application.use_cases import lint_imports, read_user_options
from importlinter.configuration import configure

import pmforge

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(pmforge.__file__).parent

# Imports a function may make: a provider's SDK loads only when settings choose it, and the conversion
# worker loads the converters only after it has set its memory limit.
LAZY_ON_PURPOSE = {
    "pmforge.llm.anthropic_llm", "pmforge.llm.openai_llm",
    "pmforge.embed.voyage", "pmforge.embed.openai_embed", "pmforge.embed.local", "pmforge.embed.hashing",
    "pmforge.ingest.convert", "pmforge.core.errors",
}


CONFIG = str(ROOT / "pyproject.toml")


def _options():
    configure()
    return read_user_options(config_filename=CONFIG)


def _contract(kind: str) -> dict:
    found = [c for c in _options().contracts_options if c["type"] == kind]
    assert found, f"pyproject.toml has no {kind} contract"
    return found[0]


def test_every_layer_contract_is_kept_with_no_exceptions_listed(capsys):
    options = _options()
    assert _contract("layers") and _contract("acyclic_siblings")  # the layers, and no circles between siblings
    for contract in options.contracts_options:
        assert not contract.get("ignore_imports"), f"{contract['name']}: no exceptions may be listed"
    kept = lint_imports(config_filename=CONFIG, cache_dir=None, no_logo=True)
    assert kept, capsys.readouterr().out  # the report names each import that breaks a contract


def test_every_top_level_package_is_a_layer():
    layers = _contract("layers")["layers"]
    named = {part.strip() for layer in layers for part in layer.replace(":", "|").split("|")}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert not modules, f"modules loose beside the layers: {sorted(modules)}"
    assert packages == named


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (inner.level or (inner.module or "").startswith("pmforge")):
                    found.append((inner.lineno, inner.module or "."))
                elif isinstance(inner, ast.Import):
                    found += [(inner.lineno, a.name) for a in inner.names if a.name.startswith("pmforge")]
    return found


def test_below_the_surfaces_no_import_hides_in_a_function():
    hidden = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "surfaces" in path.relative_to(PACKAGE).parts:
            continue  # the CLI loads each command's code when the command runs: start-up stays quick
        for line, module in _function_level_imports(path):
            if module not in LAZY_ON_PURPOSE:
                hidden.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not hidden, "\n".join(hidden)
