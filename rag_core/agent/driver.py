"""Drivers: perform the effects ``agent_loop`` asks for, synchronously or with asyncio.

Each driver yields the run's events; a non-streaming run is the same drive with the
model called in one piece and the events discarded by the caller.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Iterator

from rag_core.agent.events import ReasoningContent, RunContent, RunEvent
from rag_core.agent.loop import CallModel, Emit, PreparedRun, RunTools, agent_loop
from rag_core.errors import RagCoreError
from rag_core.messages import ModelResponse
from rag_core.models.base import ReasoningDelta, StreamPart, TextDelta
from rag_core.tools.executor import aexecute, execute


def _fail(run: PreparedRun, exc: BaseException) -> None:
    """Mark the run failed and attach what it produced to the error, so nothing is lost."""
    run.output.status = "error"
    if isinstance(exc, RagCoreError) and exc.output is None:
        exc.output = run.output


def _stream_part(run: PreparedRun, part: StreamPart, started: float) -> RunEvent | ModelResponse | None:
    """Translate one streamed piece into a run event, or the final response."""
    if isinstance(part, TextDelta):
        metrics = run.output.metrics
        if metrics.time_to_first_token is None:
            metrics.time_to_first_token = time.perf_counter() - started
        return RunContent(run_id=run.output.run_id, content=part.text)
    if isinstance(part, ReasoningDelta):
        return ReasoningContent(run_id=run.output.run_id, content=part.text)
    return part.response


def drive(run: PreparedRun) -> Iterator[RunEvent]:
    started = time.perf_counter()
    loop = agent_loop(run)
    reply: Any = None
    functions = run.functions_by_name
    try:
        while True:
            try:
                effect = loop.send(reply)
            except StopIteration:
                break
            reply = None
            if isinstance(effect, Emit):
                yield effect.event
            elif isinstance(effect, RunTools):
                reply = [execute(call, functions, run.context) for call in effect.calls]
            elif isinstance(effect, CallModel):
                if not run.stream:
                    reply = run.model.invoke(effect.request)
                    continue
                for part in run.model.invoke_stream(effect.request):
                    translated = _stream_part(run, part, started)
                    if isinstance(translated, ModelResponse):
                        reply = translated
                    else:
                        yield translated
    except BaseException as exc:
        _fail(run, exc)
        raise
    finally:
        run.output.metrics.duration = time.perf_counter() - started


async def adrive(run: PreparedRun) -> AsyncIterator[RunEvent]:
    started = time.perf_counter()
    loop = agent_loop(run)
    reply: Any = None
    functions = run.functions_by_name
    try:
        while True:
            try:
                effect = loop.send(reply)
            except StopIteration:
                break
            reply = None
            if isinstance(effect, Emit):
                yield effect.event
            elif isinstance(effect, RunTools):
                reply = [await aexecute(call, functions, run.context) for call in effect.calls]
            elif isinstance(effect, CallModel):
                if not run.stream:
                    reply = await run.model.ainvoke(effect.request)
                    continue
                async for part in run.model.ainvoke_stream(effect.request):
                    translated = _stream_part(run, part, started)
                    if isinstance(translated, ModelResponse):
                        reply = translated
                    else:
                        yield translated
    except BaseException as exc:
        _fail(run, exc)
        raise
    finally:
        run.output.metrics.duration = time.perf_counter() - started
