"""A framework that keeps the answers it was given (DSPy's memory and disk caches) keeps none once
a case's target has imported it: every run asks its model, the runs at once included."""

from __future__ import annotations

import sys
import threading

import pytest

from rag_core.evals.emulator.provider import ScriptedProvider
from rag_core.evals.recording.provider_env import forget_answers, provider_environment
from rag_core.evals.recording.recorder import CaseRecorder
from rag_core.evals.golden.targets import load_target

PROGRAM = '''
import dspy

lm = dspy.LM("openai/gpt-5.2")  # DSPy's default engine (its own sockets), caching as it does by default


def ask(question):
    return lm(question)[0]
'''


def test_runs_at_once_do_not_share_a_dspy_programs_answers(tmp_path, monkeypatch):
    """Clearing DSPy's caches as each run began did not keep runs at once apart: run b cleared
    them, run a then cached its answer, and b's identical request was answered from it (no
    request sent, a's answer)."""
    pytest.importorskip("dspy")
    (tmp_path / "cached_program.py").write_text(PROGRAM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cached_program", raising=False)
    both_loaded, a_answered = threading.Barrier(2), threading.Event()
    answers: dict[str, object] = {}

    def run(name: str) -> None:
        forget_answers()  # as each live run begins
        recorder = CaseRecorder(tmp_path / f"{name}.yaml", "all")
        try:
            ask = load_target("cached_program:ask", "test")
            with recorder.use("sdk", ScriptedProvider([{"text": f"run {name}"}], seed=name)) as replay:
                both_loaded.wait(timeout=10)
                if name == "b":
                    assert a_answered.wait(timeout=20)
                try:
                    answers[name] = (ask("Which run is this?"), len(replay.exchanges))
                finally:
                    a_answered.set()
        except Exception as exc:  # noqa: BLE001 (the test reads what each run came to)
            answers[name] = exc

    with provider_environment():
        threads = [threading.Thread(target=run, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert answers == {"a": ("run a", 1), "b": ("run b", 1)}  # each asked the model once, and got its own answer
