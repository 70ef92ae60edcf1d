"""The cassette file format: vcrpy's interactions, written for people to read and review.

* JSON bodies (requests and responses) are stored as YAML structures under ``json:``;
  server-sent-event streams as text blocks under ``text:``; anything else as ``string:``.
* ``recorded_with`` says what the cassette was recorded against (emulator or live API),
  with which SDK version and when.
* Nothing that looks like a credential is ever written: serialising raises
  SecretInCassetteError naming the interaction and field instead (``rag_core.evals.credentials``).

Registered with vcrpy as the ``rag_core`` serializer.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml

from rag_core.evals.credentials import detector
from rag_core.evals.common.errors import CassetteFileError, SecretInCassetteError
from rag_core.evals.common.paths import shown
from rag_core.evals.common.yaml_dump import _plain_str, _str, dump  # the goldens' string representers
from rag_core.evals.common.yaml_read import load_bounded, tab_problem

FORMAT_VERSION = 1  # the ``version`` field of every cassette this code writes and reads
EMULATOR_TARGET = "rag-core provider emulator"  # recorded_with.target of a cassette the emulator answered


def content_type(headers: dict[str, Any]) -> str:
    for key, value in (headers or {}).items():
        if key.lower() == "content-type":
            return (value[0] if isinstance(value, list) else str(value)).lower()
    return ""


def _encode_body(body: Any, content_type: str) -> dict[str, Any]:
    if body is None or body == "":
        return {"string": ""}
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": __import__("base64").b64encode(body).decode()}
    if "event-stream" in content_type:
        # SSE accepts LF line ends; CRLF (Gemini's) would force an unreadable quoted string
        return {"text": body.replace("\r\n", "\n")}
    if "json" in content_type or body.lstrip().startswith(("{", "[")):
        try:
            return {"json": json.loads(body)}
        except ValueError:
            pass
    return {"string": body}


def _decode_body(body: dict[str, Any]) -> Any:
    if "json" in body:
        return json.dumps(body["json"], ensure_ascii=False)
    if "text" in body:
        return body["text"]
    if "base64" in body:
        return __import__("base64").b64decode(body["base64"])
    return body.get("string", "")


def serialize(data: dict[str, Any]) -> str:
    return written(encoded(data))


def encoded(data: dict[str, Any]) -> dict[str, Any]:
    """vcrpy's cassette data as the file holds it; refused (SecretInCassetteError) when it holds
    what looks like a credential."""
    interactions = []
    for interaction in data["interactions"]:
        request, response = dict(interaction["request"]), dict(interaction["response"])
        request["body"] = _encode_body(request.get("body"), content_type(request.get("headers", {})))
        response["body"] = _encode_body(response.get("body", {}).get("string"), content_type(response.get("headers", {})))
        interactions.append({"request": request, "response": response})
    out: dict[str, Any] = {}
    metadata = data.get("metadata") or {}
    if "recorded_with" in metadata:
        out["recorded_with"] = metadata["recorded_with"]
    out["interactions"] = interactions
    out["version"] = FORMAT_VERSION
    findings = detector().find(out)
    if findings:
        raise SecretInCassetteError(findings)  # the recorder names the file
    return out


def written(out: dict[str, Any]) -> str:
    """The text of an ``encoded`` cassette."""
    return _dump(out)


if hasattr(yaml, "CSafeDumper"):
    class _CassetteDumper(yaml.CSafeDumper):  # type: ignore[misc,name-defined]
        """The golden dumper's representation, emitted by libyaml, the emitter written in C: emitting
        was most of what writing a cassette cost in Python. Its output differs from the Python emitter's
        in one way worth knowing: long double-quoted strings (a prompt with trailing spaces) fold at
        other places. Goldens keep the Python emitter, whose text reviewers diff (and --update-goldens
        compares); a cassette is rewritten whole, with its date, at every recording."""

        def ignore_aliases(self, data: object) -> bool:
            return True

    _CassetteDumper.add_representer(str, _str)
    _CassetteDumper.add_multi_representer(str, _plain_str)

    def _dump(data: Any) -> str:
        text = yaml.dump(data, Dumper=_CassetteDumper, sort_keys=False, allow_unicode=True, width=100)
        # libyaml ends a document with "..." once a "|+" block was written anywhere in it; the
        # Python emitter does not, and a mapping needs no end marker
        return text[:-4] if text.endswith("\n...\n") else text
else:  # PyYAML without libyaml: the Python emitter, as goldens
    _dump = dump


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> Any:
    """Parsed YAML of a cassette text; the same text is parsed once per process (callers copy)."""
    return load_bounded(text)


def deserialize(text: str) -> dict[str, Any]:
    data = _parse(text)
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise ValueError("expected a mapping with an 'interactions' list")
    if data.get("version", FORMAT_VERSION) != FORMAT_VERSION:
        raise ValueError(f"version {data.get('version')!r}, but this rag-core reads cassette version {FORMAT_VERSION}")
    interactions = []
    for index, interaction in enumerate(data["interactions"]):
        try:
            request, response = dict(interaction["request"]), dict(interaction["response"])
            request["body"] = _decode_body(request.get("body") or {})
            response["body"] = {"string": _decode_body(response.get("body") or {})}
            for key in ("method", "uri", "headers"):
                request[key]
            response["status"]["code"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"interactions[{index}] is missing {exc}") from exc
        interactions.append({"request": request, "response": response})
    out: dict[str, Any] = {"interactions": interactions, "version": FORMAT_VERSION}
    if data.get("recorded_with"):
        out["metadata"] = {"recorded_with": data["recorded_with"]}
    return out


def read_cassette(path: Path) -> dict[str, Any]:
    """Load and check a cassette file, with an error naming the file (and the line and column) and
    the cause; what to do about it is the caller's to add (it knows the command that records the
    cassette again)."""
    text = None
    try:
        text = path.read_text(encoding="utf-8")
        return deserialize(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteFileError(f"{shown(path)}: cannot be read ({exc})", text) from exc
    except yaml.YAMLError as exc:
        tab = tab_problem(exc, text)
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown(path)}:{mark.line + 1}:{mark.column + 1}" if mark else shown(path)
        raise CassetteFileError(f"{shown(path)}: the cassette is not valid YAML: {tab}" if tab else
                                f"{where}: the cassette is not valid YAML ({getattr(exc, 'problem', exc)})",
                                text) from exc
    except ValueError as exc:
        raise CassetteFileError(f"{shown(path)}: not a cassette: {exc}", text) from exc


def names_the_emulator(text: str | None) -> bool:
    """Whether a cassette's text (one that may not parse) says it was recorded against the emulator."""
    return text is not None and f"target: {EMULATOR_TARGET}" in text
