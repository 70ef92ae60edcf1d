"""Differential cases: two subjects, one input and one emulator script, the same conversation.

``compare_with: "module:callable"`` runs a second subject (recorded in its own cassette,
``<cassette>.compare.yaml``) and fails with a diff for every wire-level field where its traffic
differs from the case's own subject, except what ``ignore:`` leaves out (paths as in
``normalize:``; an ignored value is removed from both sides, so a key one side lacks is
ignorable too).
"""

from __future__ import annotations

from typing import Any

from rag_core.evals.harness.case import GoldenCase
from rag_core.evals.harness.observe import without

# the wire-level fields two subjects are compared on: the model conversation. Embedding and
# rerank traffic is left out (two frameworks index knowledge differently by design), and so is
# usage (token counts follow from the bodies).
COMPARED = ("system_prompt", "user_messages", "tools", "chat_requests", "tool_calls", "final_text")


def differences(case: GoldenCase, mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    from rag_core.evals.harness.paths import shown

    subject = case.target or (case.agent if isinstance(case.agent, str) else "the case's agent")
    ours = without({name: mine[name] for name in COMPARED}, case.ignore)
    other = without({name: theirs[name] for name in COMPARED}, case.ignore)
    return [f"{shown(case.source)}: compare_with: {case.compare_with} sends a different {name} than {subject} "
            f"(declare a deliberate difference under ignore:):\n"
            + _diff(f"{name} ({subject})", f"{name} ({case.compare_with})", ours.get(name), other.get(name))
            for name in COMPARED if name in ours and ours[name] != other.get(name)]


def _diff(before_label: str, after_label: str, before: Any, after: Any) -> str:
    import difflib

    from rag_core.evals.harness.yaml_dump import dump

    return "".join(difflib.unified_diff(dump(before).splitlines(keepends=True), dump(after).splitlines(keepends=True),
                                        before_label, after_label))
