"""What rag_core knows about one provider, as data: the harness derives its tables from these
(which variables hold a key, where requests go, which API a request path belongs to), and the
core builds its clients from the same module."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Provider:
    name: str  # as case files and errors name it: "openai", "azure", "gemini", ...
    # the variables a user names a key (or credentials) with, in the SDK's order of preference;
    # the harness sets a dummy only where none of them is set
    key_variables: tuple[str, ...]
    # the variables that move the endpoint: read as the SDK reads them, never rewritten
    endpoint_variables: tuple[str, ...]
    default_base_url: str
    # the API a POST to a path belongs to (a wire.py reader's name), or None
    route: Callable[[str], str | None]
    apis: tuple[str, ...]  # every name ``route`` returns
    model_apis: tuple[str, ...] = ()  # those that are model calls (not embeddings, not rerank)
    # the distributions whose versions a cassette records for this provider's traffic
    sdk_packages: tuple[str, ...] = ()
    # request headers that carry its credentials (the detector scrubs them by their words too)
    credential_headers: tuple[str, ...] = ()
    # what the harness sets when no key variable is set (default: the first one, a dummy key)
    dummy_environment: Mapping[str, str] = field(default_factory=dict)
    # the module name its APIs' wire reading and emulator dialect have in rag_core.evals (wire/<family>.py,
    # emulator/<family>.py): its own name, or the provider whose APIs it shares (Azure: openai's)
    family: str = ""
    # the core's model adapter of each model API it has one for, as "module:Class" (imported when used)
    adapters: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name)

    def key_from_environment(self) -> str | None:
        """The key the first set variable holds (in the SDK's order of preference), or None."""
        return next((os.environ[name] for name in self.key_variables if os.environ.get(name)), None)

    def missing_key(self) -> str:
        """What to tell a user who gave no key."""
        return f"no API key: pass api_key=... or set {' or '.join(self.key_variables)}"

    def dummies(self, dummy_key: str) -> dict[str, str]:
        return dict(self.dummy_environment) or {self.key_variables[0]: dummy_key}


def path_of(path: str) -> str:
    """A request path without its query string and trailing slash."""
    return path.split("?", 1)[0].rstrip("/")
