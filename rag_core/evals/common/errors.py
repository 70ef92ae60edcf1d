"""Errors of the harness. Each names the file (and line or field) it is about."""

from __future__ import annotations


class HarnessError(Exception):
    """A case, golden or cassette file is unusable; the message says which and why."""


class CaseFileError(HarnessError):
    pass


class CassetteFileError(HarnessError):
    def __init__(self, message: str, text: str | None = None) -> None:
        super().__init__(message)
        self.text = text  # what the file held, when it could be read as text (it may say what it was recorded with)


class SecretInCassetteError(HarnessError):
    """A cassette about to be written still contains something that looks like a credential."""

    def __init__(self, findings: list) -> None:
        self.findings = findings
        super().__init__("; ".join(str(f) for f in findings))


class RecordingFailed(HarnessError):
    """A recording did not succeed; the committed cassette and golden were left as they were."""

    def __init__(self, message: str, pushed_back: bool = False, wait: float | None = None) -> None:
        super().__init__(message)
        self.pushed_back = pushed_back  # it failed on a provider's 429 or 5xx: worth another try
        self.wait = wait  # the wait the provider asked for, if it named one


class UnrecordedRequestError(HarnessError):
    """Replay met a request the cassette does not hold."""
