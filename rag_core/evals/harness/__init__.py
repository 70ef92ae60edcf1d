"""Former home of the golden-case harness, now in golden/, recording/, wire/, common/ and plugins/:
only the old plugin module name is left, for installs whose entry points still name it."""
