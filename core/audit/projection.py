"""A 2-D map of a corpus: its passages' vectors projected by PCA (scikit-learn).

The issue asks for UMAP; ``umap-learn`` needs numba and llvmlite, which this
project does not ship, so the map is a linear projection: the two directions
of largest variance.  It keeps global structure (far stays far) but may put
passages that are close in 384 dimensions apart on the map; the twin links
drawn on it come from the exact cosines, never from map distances.
"""

from __future__ import annotations

import numpy as np

METHOD = "PCA"


def project_2d(vectors: np.ndarray, seed: int = 0) -> np.ndarray:
    """Each row's coordinates on the corpus's two principal components, shape (n, 2).

    Deterministic for a given ``seed`` (the randomized solver of large inputs is seeded).

    Raises:
        ValueError: not an (n, d) matrix with n >= 2 finite rows.
    """
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 2 or not np.isfinite(arr).all():
        raise ValueError(f"need an (n, d) matrix of finite values with n >= 2, got shape {arr.shape}")
    from sklearn.decomposition import PCA

    components = min(2, arr.shape[0], arr.shape[1])
    coords = PCA(n_components=components, random_state=seed).fit_transform(arr)
    if components < 2:
        coords = np.hstack([coords, np.zeros((arr.shape[0], 2 - components))])
    # PCA's signs are arbitrary; fixing them keeps the map the same across runs and machines.
    signs = np.sign(coords[np.argmax(np.abs(coords), axis=0), range(2)])
    return coords * np.where(signs == 0, 1.0, signs)
