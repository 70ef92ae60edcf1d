"""Function: one tool the model can call, with its definition and its Python entrypoint."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass, field
from typing import Any, Callable

from rag_core.tools.context import RunContext
from rag_core.tools.schema import function_parameters_schema, parse_docstring


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        return dict(getattr(fn, "__annotations__", {}))


def _context_param(fn: Callable[..., Any]) -> str | None:
    """The name of the parameter that wants the RunContext injected, if any."""
    for name, annotation in _hints(fn).items():
        if annotation is RunContext or annotation == "RunContext":
            return name
    return None


def strict_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a parameters schema for strict mode: every property required, optionals nullable."""
    required = set(parameters.get("required", []))
    properties: dict[str, Any] = {}
    for name, prop in parameters.get("properties", {}).items():
        if name not in required:
            kind = prop.get("type")
            if isinstance(kind, str) and kind != "null":
                prop = {**prop, "type": [kind, "null"]}
            elif isinstance(kind, list) and "null" not in kind:
                prop = {**prop, "type": [*kind, "null"]}
            elif "anyOf" in prop and {"type": "null"} not in prop["anyOf"]:
                prop = {**prop, "anyOf": [*prop["anyOf"], {"type": "null"}]}
        properties[name] = prop
    return {**parameters, "properties": properties, "required": list(properties)}


@dataclass
class Function:
    name: str
    description: str | None
    parameters: dict[str, Any]
    entrypoint: Callable[..., Any] | None = None
    strict: bool = False
    context_param: str | None = None
    _validated: Callable[..., Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_callable(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool = False,
    ) -> Function:
        context_param = _context_param(fn)
        skip = frozenset({context_param}) if context_param else frozenset()
        parameters = function_parameters_schema(fn, skip=skip)
        if strict:
            parameters = strict_parameters(parameters)
        summary, _ = parse_docstring(fn.__doc__)
        return cls(
            name=name or fn.__name__,
            description=description if description is not None else (summary or None),
            parameters=parameters,
            entrypoint=fn,
            strict=strict,
            context_param=context_param,
        )

    def to_dict(self) -> dict[str, Any]:
        """The provider-neutral definition; adapters reshape it into their wire format."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "strict": self.strict,
        }

    def with_entrypoint(self, entrypoint: Callable[..., Any]) -> Function:
        """This tool calling ``entrypoint``, a function with the same parameters: the definition and
        the argument validator are shared, not derived again (for a tool bound anew for each run)."""
        # made directly: dataclasses.replace would check and copy every field again, for each run
        return Function(name=self.name, description=self.description, parameters=self.parameters,
                        entrypoint=entrypoint, strict=self.strict, context_param=self.context_param,
                        _validated=self._arguments_model())

    def _arguments_model(self) -> Any:
        """A pydantic model of the model-visible parameters, built on first use."""
        if self._validated is None:
            from pydantic import ConfigDict, create_model

            assert self.entrypoint is not None
            hints = _hints(self.entrypoint)
            fields: dict[str, Any] = {}
            for name, param in inspect.signature(self.entrypoint).parameters.items():
                if name == self.context_param or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    continue
                default = ... if param.default is inspect.Parameter.empty else param.default
                fields[name] = (hints.get(name, Any), default)
            self._validated = create_model(
                f"{self.name}_arguments",
                __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
                **fields,
            )
        return self._validated

    def bind(self, arguments: dict[str, Any], context: RunContext | None) -> Callable[[], Any]:
        """Validate ``arguments`` against the signature; return a zero-argument call.

        Raises pydantic.ValidationError on bad arguments (wrong types, missing or unknown
        names), so the caller can report it to the model instead of running the tool.
        """
        if self.entrypoint is None:
            raise RuntimeError(f"tool {self.name!r} has no entrypoint")
        validated = self._arguments_model().model_validate(arguments)
        kwargs = dict(validated)
        if self.context_param:
            kwargs[self.context_param] = context
        entrypoint = self.entrypoint
        return lambda: entrypoint(**kwargs)
