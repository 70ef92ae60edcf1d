"""Cassette record modes (vcrpy's names), kept apart so the pytest plugin can offer them without
importing vcrpy or YAML."""

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
