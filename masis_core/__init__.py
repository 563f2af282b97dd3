"""The workbench's core: everything below the pages, grouped by what it does.

The top-level modules are the foundation every layer may import: ``config`` (the one
``Settings``, env prefix ``MASIS_``), ``errors`` (the exception tree), ``faults`` (fault
injection for the crash tests), ``prompts``, ``modes`` (the retrieval modes) and ``state`` (the
graph's state types, the data model every layer passes around). The subpackages, bottom to top
(a package imports the foundation, itself and the packages below it, never one beside or above
it; ``tests/test_layers.py`` checks this): ``text``, ``storage`` and ``llm``; ``retrieval``;
``answers``; ``workspaces``; ``graph``; ``services``. ``__main__`` and ``cli`` are the command
line and may reach any of them.
"""
