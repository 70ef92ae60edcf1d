"""One minimal agent per agent framework, each written the way that framework's own docs write
one (the same instructions, the one ``lookup_recipe`` tool of ``../recipes.py``, model
gpt-5.2 on OpenAI), and pinned by the ``fw_*`` golden cases through their traffic alone.

Every client is built as the docs build it: no endpoint and no key passed, both from the
environment. Each module imports only its own framework; each case says ``requires:`` it.
"""
