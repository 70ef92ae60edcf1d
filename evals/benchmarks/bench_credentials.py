"""Time of the credential detector on the texts a recording holds (run by hand, not by pytest).

    python -m evals.benchmarks.bench_credentials [--repeats 5]

Each input is read by a new detector (nothing remembered between reads), the best of ``--repeats``
reported, with the share of the ruleset's rules (``secret_rules``) read alone:

* base64 of 40 KB and 5 MB (a Responses reasoning item's ``encrypted_content``);
* 1 MB of English prose that holds the ruleset's commonest keywords ("key", "token", "api", "sk");
* every committed cassette and golden of this repository, as the data the writers screen.
"""

from __future__ import annotations

import argparse
import base64
import random
import time
from pathlib import Path
from typing import Any, Callable

import yaml

from rag_core.evals.credentials import Detector
from rag_core.evals.secret_rules import ruleset

ROOT = Path(__file__).resolve().parents[2]


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [text for key, value in node.items() for text in [str(key), *_texts(value)]]
    if isinstance(node, list):
        return [text for value in node for text in _texts(value)]
    return [node] if isinstance(node, str) else []


def inputs() -> dict[str, Any]:
    chance = random.Random(5)
    committed = [yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                 for folder in ("cassettes", "fixtures/goldens") for path in sorted((ROOT / folder).rglob("*.yaml"))]
    return {
        "base64 40 KB": {"encrypted_content": base64.b64encode(chance.randbytes(30_000)).decode()},
        "base64 5 MB": {"encrypted_content": base64.urlsafe_b64encode(chance.randbytes(3_750_000)).decode()},
        "prose 1 MB": {"content": "The key to this recipe is tamarind; ask the chef which api token the sk "
                                  "menu uses, then toast the peanuts. " * 9_000},
        f"{len(committed)} cassettes and goldens": committed,
    }


def best(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rules = ruleset()  # compiled once per process, before the timing
    for label, data in inputs().items():
        size = sum(len(text.encode()) for text in _texts(data))
        whole = best(args.repeats, lambda: Detector().find(data))
        alone = best(args.repeats, lambda: [rules.kinds(text) for text in set(_texts(data))])
        print(f"{label:<32} {size / 1e6:8.2f} MB {whole * 1e3:9.1f} ms  (ruleset alone {alone * 1e3:8.1f} ms)")


if __name__ == "__main__":
    main()
