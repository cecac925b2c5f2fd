"""The corpus audit: which passages of a user's corpus a retriever cannot tell apart (``cosine-probe audit``, the "Your corpus" page).

``neighbours`` finds every close pair exactly, ``kinds`` says what each pair
is (confusable twin, near-duplicate, several differences, other difference),
``run`` encodes a
corpus once per model and collects its close pairs, ``risk`` turns them into
numbers with intervals and findings, ``planted`` builds a corpus with planted
twins whose recall and precision are known exactly, and templated notes with
single edits and decoys.
"""
