"""The golden plugin's former module name, kept for an install whose entry points still name it
(an editable install made before the plugins moved): it is the same module object."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("rag_core.evals.plugins.golden")
