"""The provider emulator: real wire formats driven by a scripted conversation."""
