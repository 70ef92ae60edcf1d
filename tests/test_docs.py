"""The README and docs/ say what is true: links reach their targets, the commands and options they
name exist, versions match the pins, and the numbers a test can check are checked. (mkdocs build
--strict, in CI, checks the site itself.)"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
README_MAX_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"(?<!!)\[(?:[^\]`]|`[^`]*`)*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def prose_lines(path: Path) -> list[str]:
    """The page's lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def code_snippets(path: Path) -> list[str]:
    """The page's code: every line of its fenced blocks, and every code span."""
    code, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif fenced:
            code.append(line)
        else:
            code.extend(match.group(2).strip() for match in CODE_SPAN.finditer(line))
    return code


def headings(path: Path) -> list[str]:
    return [re.sub(r"^#+\s+", "", line).strip() for line in prose_lines(path) if re.match(r"^#{1,6}\s", line)]


def heading_text(heading: str) -> str:
    """What a heading renders as: code spans keep their text, links their label, no emphasis."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.replace("*", "")


def mkdocs_slug(heading: str) -> str:
    """Python-Markdown's toc slugify, which MkDocs uses for anchors."""
    value = unicodedata.normalize("NFKD", heading_text(heading)).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def github_slug(heading: str) -> str:
    """GitHub's anchors, for links in the README (which GitHub renders)."""
    value = heading_text(heading).strip().lower()
    value = re.sub(r"[^\w\- ]", "", value)
    return value.replace(" ", "-")


def links(path: Path) -> list[str]:
    """The targets of the page's markdown links (not those inside code)."""
    found = []
    for line in prose_lines(path):
        found.extend(match.group(1) for match in LINK.finditer(CODE_SPAN.sub("``", line)))
    return found


# ------------------------------------------------------------------ size and links


def test_the_readme_fits():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_the_docs_exist_and_the_readme_links_into_them():
    assert {p.name for p in DOCS} >= {"index.md", "getting-started.md", "performance.md", "providers.md", "cli.md"}
    assert "docs/getting-started.md" in links(README)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_anchor(page):
    slug = github_slug if page == README else mkdocs_slug
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check here
            continue
        file_part, _, anchor = target.partition("#")
        path = (page.parent / file_part).resolve() if file_part else page
        if not path.exists():
            broken.append(f"{target}: no such file")
            continue
        if page.parent == ROOT / "docs" and not path.is_relative_to(ROOT / "docs"):
            broken.append(f"{target}: outside docs/ (the site cannot link there)")
        if anchor and path.suffix == ".md" and anchor not in {slug(h) for h in headings(path)}:
            broken.append(f"{target}: no heading with the anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def entries(nav):
        for item in nav:
            for value in item.values():
                yield from entries(value) if isinstance(value, list) else [value]

    listed = list(entries(config["nav"]))
    assert sorted(listed) == sorted(p.name for p in DOCS)
    assert config["strict"] is True and config["validation"]["anchors"] == "warn"


# ------------------------------------------------------------------ commands and options


@pytest.fixture(scope="module")
def pytest_options() -> set[str]:
    """Every long option pytest knows here, with the project's plugins (parsed from --help once)."""
    result = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", result.stdout))
    assert {"--update-goldens", "--record-mode", "--report-dir"} <= options
    return options


def rag_core_parser():
    from rag_core.cli import build_parser

    return build_parser()


def subcommands(parser) -> dict:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def option_strings(parser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def rag_core_commands() -> list[tuple[str, list[str]]]:
    """Every `rag-core ...` (or `python -m rag_core ...`) command the pages show."""
    found = []
    for page in PAGES:
        for snippet in code_snippets(page):
            for match in re.finditer(r"(?:^|[\s(])(?:rag-core|python -m rag_core)((?: +[^\s#&|;`)]+)*)", snippet):
                found.append((page.name, match.group(1).split()))
    return found


def test_every_rag_core_command_the_docs_name_exists():
    assert rag_core_commands(), "the docs show rag-core commands"
    problems = []
    for page, words in rag_core_commands():
        parser = rag_core_parser()
        for word in words:
            word = word.strip("[]")
            if word == "--":
                break  # what follows is another command's line (rag-core offline -- pytest ...)
            if word.startswith("-"):
                if word.split("=")[0] not in option_strings(parser):
                    problems.append(f"{page}: rag-core {' '.join(words)}: no option {word}")
                continue
            choices = subcommands(parser)
            if not choices:
                break  # an argument of the command (a folder, a file, a spec)
            if word not in choices:
                problems.append(f"{page}: rag-core {' '.join(words)}: no command {word!r}")
                break
            parser = choices[word]
    assert not problems, "\n".join(problems)


def command_paths(parser, path=()) -> list[tuple[tuple[str, ...], object]]:
    """Every command a user runs (``init``, ``emulator serve``, ...) with its parser."""
    children = subcommands(parser)
    if not children:
        return [(path, parser)]
    return [found for name, child in children.items() for found in command_paths(child, path + (name,))]


def cli_table_rows() -> dict[str, str]:
    """docs/cli.md's table of rag-core commands: each row's command cell, by the row's full text."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text.split("## The `rag-core` command", 1)[1].split("## pytest options", 1)[0]
    return {row: re.match(r"\| `([^`]+)`", row).group(1) for row in table.splitlines() if row.startswith("| `rag-core")}


def test_the_cli_page_lists_every_rag_core_command_with_every_option_and_argument():
    rows = cli_table_rows()
    problems = []
    for path, parser in command_paths(rag_core_parser()):
        command = "rag-core " + " ".join(path)
        row = next((row for row, cell in rows.items() if cell == command or cell.startswith(command + " ")), None)
        if row is None:
            problems.append(f"docs/cli.md: no row for {command}")
            continue
        cell = rows[row]
        for action in parser._actions:
            if "--help" in action.option_strings:
                continue
            if action.option_strings:
                if not any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", row) for s in action.option_strings):
                    problems.append(f"docs/cli.md: {command}: no {'/'.join(action.option_strings)}")
            elif action.metavar and action.metavar not in cell:
                problems.append(f"docs/cli.md: {command}: its argument {action.metavar} is not in `{cell}`")
    top = option_strings(rag_core_parser()) - {"-h", "--help"}
    problems += [f"docs/cli.md: no row for rag-core {o}" for o in top if not any(c == f"rag-core {o}" for c in rows.values())]
    assert not problems, "\n".join(problems)


def test_the_cli_page_lists_every_pytest_option_rag_core_adds():
    result = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    group = result.stdout.split("rag-core golden cases and retrieval suites:", 1)[1].split("\n\n", 1)[0]
    ours = set(re.findall(r"^  (--[a-z][a-z0-9-]*)", group, re.MULTILINE))
    assert {"--update-goldens", "--report-dir", "--runs-dir"} <= ours, group
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("## pytest options", 1)[1]
    listed = set(re.findall(r"^\| `(--[a-z][a-z0-9-]*)", page, re.MULTILINE)) | set(
        re.findall(r"^\| `--[a-z-]+`, `(--[a-z][a-z0-9-]*)`", page, re.MULTILINE))
    missing = ours - listed
    assert not missing, f"docs/cli.md lists no row for {sorted(missing)}"


def benchmark_options() -> dict[str, set[str]]:
    return {path.stem: set(re.findall(r"add_argument\(\s*\"(--[a-z0-9-]+)\"", path.read_text(encoding="utf-8")))
            for path in (ROOT / "evals" / "benchmarks").glob("bench_*.py")}


def test_every_pytest_and_benchmark_option_the_docs_name_exists(pytest_options):
    benchmarks = benchmark_options()
    every_benchmark_option = set().union(*benchmarks.values())
    rag_core = option_strings(rag_core_parser()) | {s for p in subcommands(rag_core_parser()).values()
                                                    for q in [p, *subcommands(p).values()] for s in option_strings(q)}
    others = {"--strict", "--site-dir", "--no-deps", "--quiet", "--vs"}  # mkdocs, pip, farm-bench
    problems = []
    for page in PAGES:
        for snippet in code_snippets(page):
            pytest_command = re.search(r"(?:^|\s)(?:python -m )?pytest(\s.*)?$", snippet)
            benchmark = re.search(r"python -m evals\.benchmarks\.(bench_\w+)(.*)", snippet)
            if pytest_command:
                for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", (pytest_command.group(1) or "").split("#")[0]):
                    if option not in pytest_options:
                        problems.append(f"{page.name}: `{snippet}`: pytest has no {option}")
            elif benchmark:
                for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", benchmark.group(2)):
                    if option not in benchmarks.get(benchmark.group(1), set()):
                        problems.append(f"{page.name}: `{snippet}`: {benchmark.group(1)} has no {option}")
            elif re.match(r"^--[a-z]", snippet):  # an option named on its own
                option = re.match(r"--[a-z][a-z0-9-]*", snippet).group(0)
                if option not in pytest_options | rag_core | every_benchmark_option | others:
                    problems.append(f"{page.name}: `{snippet}`: no such option")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ packaging, CI


def test_the_docs_extra_is_declared_and_nothing_else_pulls_it_in():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras["docs"] == ["mkdocs>=1.6", "mkdocs-material>=9.5"]
    assert not [name for name, requirements in extras.items()
                if any(re.search(r"rag-core\[[^\]]*\bdocs\b", r) for r in requirements)]


def test_ci_runs_both_readme_commands_and_builds_the_docs_strictly():
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install -e ".[evals]" && pytest evals/' in readme
    assert 'pip install -e ".[all]" && pytest -n auto --dist loadgroup' in readme
    assert "python -m venv .venv && . .venv/bin/activate" in readme
    joined = re.sub(r"\\\n\s*", " ", ci)  # a command continued over lines, as one line
    commands = [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert any("mkdocs build --strict" in line and "--site-dir" in line and "--quiet" not in line for line in commands)
    # the light venv installs the evals extra alone (from the repository, or its copy), then runs pytest evals/
    light = [line for line in commands if re.search(r'-m pip install --quiet -e "[^"]*\[evals\]"$', line)]
    assert light and any(re.search(r"-m pytest .*evals/$", line) for line in commands[commands.index(light[0]):])
    assert any("-n auto --dist loadgroup" in line for line in commands)


# ------------------------------------------------------------------ numbers a test can check


def test_no_test_counts_are_stated():
    counted = re.compile(r"\b\d[\d,]*\s+(?:tests?|passed|skipped|failed|xfailed|errors?|cases?|test files?)\b", re.I)
    found = []
    for page in [*PAGES, ROOT / "CHANGELOG.md"]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            found.extend(f"{page.name}:{number}: {m.group(0)}" for m in counted.finditer(line))
    assert not found, "test counts go stale with every test added: " + "; ".join(found)


def pinned_versions() -> dict[str, str]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    pins = {}
    for requirements in extras.values():
        for requirement in requirements:
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([\w.]+)", requirement)
            if match:
                pins[match.group(1).lower()] = match.group(2)
    return pins


def test_the_versions_the_docs_name_are_the_pinned_ones():
    pins = pinned_versions()
    assert {"agno", "openai-agents", "langchain"} <= set(pins)
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    wrong = []
    for name, version in pins.items():
        for match in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])(?:==|\s+)(\d+(?:\.\d+)*)\b", text, re.I):
            named = match.group(1)
            if not (version == named or version.startswith(named + ".")):
                wrong.append(f"{match.group(0)!r}: pyproject.toml pins {name}=={version}")
    assert not wrong, "\n".join(wrong)


def table_rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.strip().startswith("|")]


def test_the_retrieval_numbers_are_the_committed_baselines():
    """Each table row naming a baseline (`name`) gives that baseline's metrics, to 4 decimals."""
    page = (ROOT / "docs" / "retrieval.md").read_text(encoding="utf-8")
    checked = 0
    for section in re.split(r"^### ", page, flags=re.M)[1:]:
        suite = section.split("\n", 1)[0].strip().lower()
        rows = table_rows(section)
        if not rows:
            continue
        header = [cell.lower() for cell in rows[0]]
        for row in rows[2:]:
            name = re.search(r"\(`(\w+)`\)", row[0])
            if not name:
                continue
            baseline = json.loads((ROOT / "fixtures" / "retrieval" / "baselines" / suite / f"{name.group(1)}.json")
                                  .read_text(encoding="utf-8"))["metrics"]
            for column, cell in zip(header, row):
                if column in baseline:
                    assert abs(float(cell) - baseline[column]) < 1e-4 + 1e-9, (suite, name.group(1), column, cell)
                    checked += 1
    assert checked >= 25, checked


def _test_module(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_credential_counts_are_the_planted_sets():
    families = _test_module("test_credential_families")
    planted = _test_module("test_credentials")
    page = (ROOT / "docs" / "credentials.md").read_text(encoding="utf-8")
    kinds = len({family for family, _, _ in families.PLANTED})
    assert f"plants {len(families.PLANTED)} credentials of {kinds} kinds" in page
    assert f"and {len(families.LOOK_ALIKES)} look-alikes" in page
    assert f"records {len(planted.PLANTED)} planted credentials" in page
