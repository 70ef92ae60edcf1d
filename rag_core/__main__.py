"""``python -m rag_core``: the same as the ``rag-core`` command."""

import sys

from rag_core.cli import main

sys.exit(main())
