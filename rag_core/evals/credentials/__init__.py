"""The one credential detector: every file the harness writes (cassettes, goldens, run records,
the live journal, reports and summaries, baselines, recorded rankings, embedding-cache metadata)
passes it before it reaches the disk.

Two jobs:

* **scrub** what has a known place and can simply be dropped: request headers whose name says
  credential (key, token, secret, auth, signature, credential, password, cookie), query parameters
  whose name says credential (the same words and passwd, passphrase, found anywhere in the name
  whatever its case and separators, and the words sig, pwd, pw and pass; see ``scrub_query_parameter``
  for the harmless names kept), and the ``user:password@`` part of URLs;
* **find** what is left anywhere else (request and response bodies, case inputs, tool arguments,
  prompts): credentials of a maintained ruleset (gitleaks' rules, read as data: ``secret_rules``),
  credentials of the well-known families by their shape (``FAMILIES``: provider keys, cloud and CI
  tokens, private key blocks, webhooks…, and the keys of RAG stacks the ruleset lacks),
  bearer/basic credentials, and values that look like a key, a token or a password after a
  key-like name (a JSON field, ``NAME=value``, ``NAME: value``, ``"name": "value"``, a URL's query
  parameter, "the key is …" in prose). A finding is never scrubbed silently, because a body is
  evidence the golden pins: the write is refused, naming the file, the place and the kind, and the
  previous file stays.

The detector reads data: nested dicts and lists, each string value and each key (``find``). A text
that holds an escaped text (a tool call's JSON arguments, an event stream's JSON data) is read
decoded too, where a key that opens a line no longer follows a "\\n".

Every pattern runs in time linear in the text: the ruleset's run on RE2; each of the detector's
own either starts at a literal prefix and reads a bounded or possessive run after it, or starts
only where a run of its characters starts; a rule whose prefix is not in the text is not run at
all (one pass of an RE2 set finds the prefixes a text holds). Within one scan, a text in which the
built-in rules found nothing is not read by them again: a recording sends its prompt and every
earlier turn again in each request.

Projects add header names (``rag_core_scrub_headers``) and patterns (``rag_core_secret_patterns``)
in their pytest ini; ``configure`` installs them for the session.
"""


from rag_core.evals.credentials.detector import CredentialError, Detector, Finding, check, configure, detector
from rag_core.evals.credentials.families import FAMILIES, Family

__all__ = ["FAMILIES", "CredentialError", "Detector", "Family", "Finding", "check", "configure", "detector"]
