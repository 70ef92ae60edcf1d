"""How a recording reaches the disk: vcrpy's persister and serializer, writing the staging file
atomically through the credential check, and keeping what they meet for the recorder to raise."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from rag_core.evals.atomic import write_atomic
from rag_core.evals.common.errors import SecretInCassetteError
from rag_core.evals.common.value_sizes import LargeValue, large_values
from rag_core.evals.recording import cassette_format


class _Measured:
    """``cassette_format`` as vcrpy's serializer, keeping the values of what it writes that are
    large enough for the recording to warn about."""

    def __init__(self) -> None:
        self.large: list[LargeValue] = []

    def serialize(self, data: dict[str, Any]) -> str:
        out = cassette_format.encoded(data)
        self.large = large_values(out)
        return cassette_format.written(out)


class _Decoded:
    """A serializer for vcrpy's ``deserialize`` that gives what was already decoded from the file."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def deserialize(self, text: str) -> dict[str, Any]:
        return self.data


class AtomicPersister:
    """vcrpy's filesystem persister, writing the (staging) file atomically, and loading the cassette
    (or the staging copy of it a recording adds to) from what the recorder has just read of it
    (``read``), not from the file again.

    Nothing it meets is raised inside vcrpy: vcrpy saves inside its context manager's exit, and
    an exception there leaves its HTTP-client patches in place, so the next case would record
    into a cassette committed with part of its interactions. A credential refusal, or a write
    that fails (a full disk, a file too large, an unwritable folder), is kept and raised by the
    recorder once vcrpy has exited cleanly. A run given up (``CaseRecorder.end``) writes nothing."""

    def __init__(self, ended: threading.Event, writing: threading.Lock,
                 read: tuple[Path, dict[str, Any]] | None = None) -> None:
        self.refused: SecretInCassetteError | None = None
        self.failed: Exception | None = None
        self.large: list[LargeValue] = []  # the values of the file it wrote that a recording warns about
        self.ended, self.writing = ended, writing
        self._read = read  # (the path vcrpy loads, what the recorder read of it): loaded once as it is

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        from vcr.persisters.filesystem import FilesystemPersister
        from vcr.serialize import deserialize

        read, self._read = self._read, None
        if read is not None and Path(cassette_path) == read[0]:
            # the file the recorder has just read and checked (or its copy), not read and decoded again
            return deserialize("", _Decoded(read[1]))
        return FilesystemPersister.load_cassette(cassette_path, serializer)

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        measured = _Measured()  # the harness's serializer (``_opened`` names it), measuring what it writes
        try:
            with self.writing:
                if not self.ended.is_set():
                    write_atomic(Path(cassette_path), serialize(cassette_dict, measured))
                    self.large = measured.large
        except SecretInCassetteError as exc:
            self.refused = exc
        except Exception as exc:  # noqa: BLE001 (anything: see the class docstring)
            self.failed = exc
