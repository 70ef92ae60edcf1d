"""Names the pytest plugins need before any case is read, kept apart so that they can use them
without importing vcrpy, pydantic or YAML: the cassette record modes (vcrpy's names) and the
suffix of golden files."""

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")

GOLDEN_SUFFIX = ".golden.yaml"
