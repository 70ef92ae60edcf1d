"""Errors of the harness. Each names the file (and line or field) it is about."""

from __future__ import annotations


class HarnessError(Exception):
    """A case, golden or cassette file is unusable; the message says which and why."""


class CaseFileError(HarnessError):
    pass


class CassetteFileError(HarnessError):
    pass


class SecretInCassetteError(HarnessError):
    """A cassette about to be written still contains something that looks like a credential."""

    def __init__(self, findings: list) -> None:
        self.findings = findings
        super().__init__("; ".join(str(f) for f in findings))


class RecordingFailed(HarnessError):
    """A recording did not succeed; the committed cassette and golden were left as they were."""


class UnrecordedRequestError(HarnessError):
    """Replay met a request the cassette does not hold."""
