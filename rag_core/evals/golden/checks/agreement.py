"""A rag_core agent's own account of its run against what its traffic shows: the adapter sent
something the agent does not know about, or the agent reports something never sent."""

from __future__ import annotations

from rag_core.evals.golden.case_run import CaseRun
from rag_core.evals.common.failure import Failure
from rag_core.evals.golden.normalizing import normalize
from rag_core.evals.common.paths import shown
from rag_core.evals.wire.parts import neutral_tool

AGREEING_FIELDS = ("system_prompt", "user_messages", "tools", "tool_calls")


def agent_and_wire(run: CaseRun) -> list[Failure]:
    if not run.is_agent:
        return []  # a target has no account of its own: its golden is read from the wire
    own = dict(run.observed, tools=[neutral_tool(t) for t in run.observed["tools"]])
    seen = normalize(run.wire, list(run.case.rules))
    differing = [name for name in AGREEING_FIELDS if own[name] != seen[name]]
    cassette = shown(run.subject.cassette) if differing else ""  # named in a failure only
    return [Failure("agreement", "cassette", cassette, name,
                    f"{cassette}: the agent's {name} differs from what its traffic shows:",
                    golden=own[name], observed=seen[name], label=f"{name} (agent, expected) vs wire")
            for name in differing]
