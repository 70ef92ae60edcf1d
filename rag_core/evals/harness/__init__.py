"""The golden-case harness: case files, cassettes, the provider emulator server and the pytest plugin."""
