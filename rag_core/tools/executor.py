"""Running the tool calls a model asked for.

Nothing a model sends can crash a run: malformed JSON, an unknown tool name, arguments
that do not fit the signature and exceptions raised by the tool all become an error
text returned to the model as the tool's output (so it can recover), and are kept on the
ToolExecution for the caller to inspect.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from typing import Any, Callable, Mapping

from rag_core.messages import ToolCall
from rag_core.run_output import ToolExecution  # importable from here too, its home before run_output
from rag_core.text import without_surrogates
from rag_core.tools.context import RunContext
from rag_core.tools.function import Function


def result_text(value: Any) -> str:
    """Tool return values become text: strings as they are, data as JSON, None as empty."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple, int, float, bool)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _error_text(name: str, exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in exc.errors()
        )
        return f"invalid arguments for tool {name!r}: {problems}"
    return f"tool {name!r} raised {type(exc).__name__}: {exc}"


def prepare(
    call: ToolCall, functions: Mapping[str, Function], context: RunContext
) -> tuple[ToolExecution, Callable[[], Any] | None]:
    """Parse and check a call. Returns the execution record and the call to make, or None
    when the call cannot run (the record then carries the error)."""
    execution = ToolExecution(id=call.id, name=call.name, arguments=None, raw_arguments=call.arguments)
    function = functions.get(call.name)
    if function is None:
        available = ", ".join(sorted(functions)) or "none"
        execution.error = f"unknown tool {call.name!r}; available tools: {available}"
        return execution, None
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        execution.error = f"arguments for tool {call.name!r} are not valid JSON ({exc}): {call.arguments!r}"
        return execution, None
    if not isinstance(arguments, dict):
        execution.error = f"arguments for tool {call.name!r} must be a JSON object, got: {call.arguments!r}"
        return execution, None
    execution.arguments = arguments
    try:
        return execution, function.bind(arguments, context)
    except Exception as exc:  # pydantic.ValidationError: the arguments do not fit the signature
        execution.error = _error_text(call.name, exc)
        return execution, None


def _finish(execution: ToolExecution, started: float, value: Any = None, error: Exception | None = None) -> ToolExecution:
    if error is not None:  # a failing tool is reported to the model, not raised
        execution.error = without_surrogates(_error_text(execution.name, error), f"the error of tool {execution.name!r}")
    else:
        execution.result = without_surrogates(result_text(value), f"the output of tool {execution.name!r}")
    execution.duration = time.perf_counter() - started
    return execution


def execute(call: ToolCall, functions: Mapping[str, Function], context: RunContext) -> ToolExecution:
    execution, thunk = prepare(call, functions, context)
    if thunk is None:
        return execution
    started = time.perf_counter()
    try:
        value = thunk()
        if inspect.isawaitable(value):
            value = _run_coroutine(value, call.name)
    except Exception as exc:
        return _finish(execution, started, error=exc)
    return _finish(execution, started, value)


async def aexecute(call: ToolCall, functions: Mapping[str, Function], context: RunContext) -> ToolExecution:
    execution, thunk = prepare(call, functions, context)
    if thunk is None:
        return execution
    started = time.perf_counter()
    try:
        value = thunk()
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        return _finish(execution, started, error=exc)
    return _finish(execution, started, value)


def _run_coroutine(awaitable: Any, name: str) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaitable)
    awaitable.close()
    raise RuntimeError(f"tool {name!r} is async and an event loop is running: use agent.arun()")
