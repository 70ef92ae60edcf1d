"""A case's ``model:``: which adapter and model it talks to, and the adapter options it sets,
checked against the adapter's own fields and types when the case is loaded."""

from __future__ import annotations

import difflib
import functools
from typing import Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from rag_core.evals.common.strict_model import StrictModel
from rag_core.providers import ADAPTED_APIS, adapter_of


def adapter_class(api: str) -> type:
    """The model adapter a case's ``model.api`` names (``rag_core.providers``: each provider's adapters)."""
    return adapter_of(api)


# adapter fields a case may not set through options: model.id sets the id, keys come from the
# environment (never from a file in the repository), and the HTTP clients are the SDK's own
_HARNESS_OWNED = {"id", "api_key", "auth_token", "http_client", "async_http_client", "client", "client_params"}


class ModelSpec(StrictModel):
    """Which adapter and model the case talks to, and adapter options (temperature, ...)."""

    api: Literal[ADAPTED_APIS] = "openai-responses"  # type: ignore[valid-type]  (the providers' table)
    id: str = "gpt-5.2"
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _options(self) -> ModelSpec:
        """Options are checked against the adapter's own fields and types at load time, so a
        mistyped option fails before anything is recorded."""
        adapter = adapter_class(self.api)
        known = _adapter_options(adapter)
        for name, value in self.options.items():
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
                raise ValueError(f"options.{name}: {adapter.__name__} has no option {name!r} " + (
                    f"(did you mean {close[0]!r}?)" if close else f"(it has: {', '.join(sorted(known))})"))
            try:
                _option_validator(adapter, name).validate_python(value, strict=True)
            except ValidationError as exc:
                raise ValueError(f"options.{name}: {value!r} is not a valid {name} for {adapter.__name__} "
                                 f"({exc.errors()[0]['msg']})") from None
        return self


@functools.cache
def _adapter_options(adapter: type) -> dict[str, Any]:
    """The options a case may set on ``adapter``, with their types: worked out once per adapter
    (its annotations are strings, which every get_type_hints call evaluates anew)."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(adapter)
    return {f.name: hints[f.name] for f in dataclasses.fields(adapter)
            if f.init and not f.name.startswith("_") and f.name not in _HARNESS_OWNED}


@functools.cache
def _option_validator(adapter: type, name: str) -> TypeAdapter[Any]:
    return TypeAdapter(_adapter_options(adapter)[name])
