"""Differential cases: two subjects, one input and one emulator script, the same conversation.

``compare_with: "module:callable"`` runs a second subject (recorded in its own cassette,
``<cassette>.compare.yaml``) and fails with a diff for every wire-level field where its traffic
differs from the case's own subject, except what ``ignore:`` leaves out (paths as in
``normalize:``; an ignored value is removed from both sides, so a key one side lacks is
ignorable too).
"""

from __future__ import annotations

from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.common.failure import Failure
from rag_core.evals.golden.normalizing import without
from rag_core.evals.common.paths import shown

# the wire-level fields two subjects are compared on: the model conversation. Embedding and
# rerank traffic is left out (two frameworks index knowledge differently by design), and so is
# usage (token counts follow from the bodies).
COMPARED = ("system_prompt", "user_messages", "tools", "chat_requests", "tool_calls", "final_text")


def compare_with(run: CaseRun) -> list[Failure]:
    case = run.case
    if case.compare_with is None or run.other_wire is None:
        return []
    subject = case.target or (case.agent if isinstance(case.agent, str) else "the case's agent")
    ours = without({name: run.wire[name] for name in COMPARED}, case.ignore)
    other = without({name: run.other_wire[name] for name in COMPARED}, case.ignore)
    where = shown(case.source)
    return [Failure("compare_with", "case", where, name,
                    f"{where}: compare_with: {case.compare_with} sends a different {name} than {subject} "
                    "(declare a deliberate difference under ignore:):",
                    golden=ours.get(name), observed=other.get(name),
                    label=(f"{name} ({subject})", f"{name} ({case.compare_with})"))
            for name in COMPARED if name in ours and ours[name] != other.get(name)]
