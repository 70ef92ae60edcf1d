"""How long the log of a prompt edit is: the lines ``CI=true pytest evals/`` prints after one
sentence of a system prompt that two cases share is edited (run by hand, not by pytest).

    python -m evals.benchmarks.prompt_edit_log [--code DIR]

The project is tests/golden_project.py's, both of its cases given the instruction ``Be brief.``;
it is recorded against the emulator, the instruction becomes ``Be very brief.`` in both, and the
strict replay CI runs is counted: its lines, the lines of its failures section, and how often
the edited line is printed. With ``--code`` the ``rag_core`` of another source tree runs (an
older checkout, to compare). Then, where the code has it, the command the summary prints to accept
every change is run, and CI's replay after it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACCEPT_LEAD = "if every change shown is intended, accept them all ("


def _write_project(root: Path) -> None:
    from evals.benchmarks.report_screenshots import write_project

    write_project(root)
    tool_case = root / "fixtures" / "goldens" / "with_tool.yaml"
    tool_case.write_text(tool_case.read_text().replace('agent: {tools: ["pantry_tools:lookup"]}',
                                                       'agent: {tools: ["pantry_tools:lookup"], instructions: [Be brief.]}'))


def _pytest(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)


def measure(code: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(code.resolve()), str(ROOT)])
    with tempfile.TemporaryDirectory(prefix="rag-core-prompt-edit-") as scratch:
        root = Path(scratch)
        _write_project(root)
        recorded = _pytest(root, env, "evals/test_goldens.py", "--record-mode=once", "--emulator")
        if recorded.returncode != 0:
            raise SystemExit(recorded.stdout[-3000:])
        for case in (root / "fixtures" / "goldens").glob("with_*.yaml"):
            if not case.name.endswith(".golden.yaml"):
                case.write_text(case.read_text().replace("Be brief.", "Be very brief."))
        ci = {**env, "CI": "true"}
        edited = _pytest(root, ci, "evals/test_goldens.py")
        lines = edited.stdout.splitlines()
        failures = edited.stdout.split(" FAILURES ", 1)[-1].split(" short test summary info ", 1)[0].splitlines()
        out: dict[str, object] = {
            "exit status": edited.returncode, "log lines": len(lines), "failures section lines": len(failures),
            "lines with the edit": sum("Be very brief." in line for line in lines)}
        accept = next((line.split(ACCEPT_LEAD, 1)[1].split("): ", 1)[1] for line in lines if ACCEPT_LEAD in line), None)
        if accept is not None:
            out["accept command"] = accept
            words = shlex.split(accept)
            accepted = _pytest(root, env, *words[1:])
            out["accept exit status"] = accepted.returncode
            replayed = _pytest(root, ci, "evals/test_goldens.py")
            out["CI replay after it"] = f"exit status {replayed.returncode}: {replayed.stdout.strip().splitlines()[-1].strip('= ')}"
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the source tree whose rag_core runs (default: this one)")
    for name, value in measure(parser.parse_args().code).items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
