"""``cosine-probe tune``: the probe's failures as training data, a fine-tune, and an honest before/after.

``data`` builds the split and the (anchor, positive, negative) triples,
``train`` runs sentence-transformers' trainer, ``report`` scores the
untouched, tuned and control models on both halves.
"""
