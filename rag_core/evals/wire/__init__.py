"""What provider traffic says, read from the wire formats themselves (no agent needed): the
golden fields of a request/response pair, what its calls cost, whether its bodies are ones the
provider's SDK would build."""
