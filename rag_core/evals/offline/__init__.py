"""``rag-core offline``: a command run with no network but loopback, for what the in-process
network guard cannot see (child processes, sockets opened in C): the namespace (``namespace.py``),
the relay to the machine's named loopback ports (``relay.py``), the filter that refuses unix
sockets (``unix_filter.py``)."""
