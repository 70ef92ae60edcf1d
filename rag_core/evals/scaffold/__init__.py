"""``rag-core init``: what it writes into a project (an example golden case that runs there, its test
module, pytest settings in the project's own format, a CI workflow), all or nothing."""
