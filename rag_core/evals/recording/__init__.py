"""Record and replay: a subject's provider traffic in a cassette (vcrpy), the network guard, the
run each request belongs to, the environment a subject runs in, and what to do when a provider
pushes back. Golden cases and retrieval recordings both run through here."""
