"""Run records: one compact JSON file per ``pytest evals/`` session, read back by ``rag-core report``.

``schema`` is what a record holds, ``collect`` is the pytest plugin that gathers it (in the
controller, from every worker's reports), ``store`` names, writes, finds and prunes the files,
``compare`` and ``history`` read records against each other, ``merge`` makes one record of a run's
CI shards. Only ``schema`` turns records into JSON and back: everything else works on its
dataclasses.
"""
