"""The exceptions rag_core raises on purpose.

Every error a user can cause (bad configuration, a provider refusing a request, a run that
does not converge) surfaces as one of these, with a message that names the cause, instead
of a traceback from deep inside a dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_core.run_output import RunOutput

__all__ = ["AgentRunError", "MissingExtraError", "ModelProviderError", "RagCoreError", "StructuredOutputError"]


class RagCoreError(Exception):
    """Base class of every error raised by rag_core itself.

    When the error interrupts an agent run, ``output`` holds what the run had produced
    so far (requests sent, tool calls made), so nothing is lost.
    """

    output: RunOutput | None = None


class MissingExtraError(RagCoreError, ImportError):
    """An optional dependency is needed for a feature but is not installed (or, with
    ``minimum``, is older than the feature needs)."""

    def __init__(self, package: str, extra: str, feature: str, *, minimum: str | None = None,
                 installed: str | None = None) -> None:
        self.package = package
        self.extra = extra
        if minimum is None:
            super().__init__(f"{feature} needs the '{package}' package, which is not installed. "
                             f"Install it with: pip install 'rag-core[{extra}]'")
        else:
            super().__init__(f"{feature} needs {package} {minimum} or later, and {package} {installed} is "
                             f"installed. Upgrade it with: pip install -U 'rag-core[{extra}]'")


class ModelProviderError(RagCoreError):
    """A model provider answered with an error status, or could not be reached.

    ``status_code`` is None when no HTTP response arrived (connection refused, timeout).
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status_code: int | None = None,
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        self.provider = provider
        self.status_code = status_code
        self.provider_message = message
        self.request_id = request_id
        self.body = body
        status = f"HTTP {status_code}" if status_code is not None else "no response"
        rid = f", request id {request_id}" if request_id else ""
        super().__init__(f"{provider} returned an error ({status}{rid}): {message}")


class AgentRunError(RagCoreError):
    """A run was stopped before the model produced a final answer.

    ``output`` holds everything the run produced up to that point, so nothing is lost.
    """

    def __init__(self, message: str, output: RunOutput) -> None:
        super().__init__(message)
        self.output = output


class StructuredOutputError(RagCoreError):
    """The model's answer is not an instance of the run's ``output_schema``.

    ``raw`` is the text the model sent (also kept as the run output's ``content``)."""

    def __init__(self, schema: type, raw: str | None, problem: str) -> None:
        self.schema = schema
        self.raw = raw
        shown = raw if raw is None or len(raw) <= 500 else raw[:500] + f"… ({len(raw)} characters)"
        super().__init__(f"the model's answer does not match output_schema {schema.__name__}: {problem}; "
                         f"the answer was {shown!r} (kept in full on the error's .raw)")
