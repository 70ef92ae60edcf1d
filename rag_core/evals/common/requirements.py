"""Whether a case's or a retriever's ``requires:`` holds in this environment."""

from __future__ import annotations

import importlib.util


def unmet(requirement: str) -> str | None:
    """Why a ``requires:`` entry does not hold here, or None: a module (``llama_index.core``) that
    cannot be imported, or a distribution with a version range (``google-genai<3``) that is not
    installed in it."""
    if any(sign in requirement for sign in "<>=!~"):
        from importlib.metadata import PackageNotFoundError, version

        from packaging.requirements import InvalidRequirement, Requirement

        try:
            wanted = Requirement(requirement)
        except InvalidRequirement as exc:
            return f"{requirement!r}, which is not a requirement ({exc})"
        try:
            installed = version(wanted.name)
        except PackageNotFoundError:
            return f"{requirement}, which is not installed"
        return None if wanted.specifier.contains(installed, prereleases=True) else \
            f"{requirement}, and {wanted.name} {installed} is installed"
    try:
        found = importlib.util.find_spec(requirement) is not None
    except (ImportError, ValueError):  # a dotted name whose parent package is missing, or ""
        found = False
    return None if found else f"{requirement}, which is not installed"
