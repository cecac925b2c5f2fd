"""The Retrieval page's parts: one module per input source behind one registry (``ui/retrieval/registry.py``).

``views/retrieval.py`` lays the page out; each source module gives its inputs' widgets, how its run goes
through the cached resources and how its result is drawn.
"""
