"""Where cosine-probe keeps its files."""

from __future__ import annotations

import os
from pathlib import Path

from core.constants import CACHE_ENV_VAR, ENV_LOCALAPPDATA, ENV_XDG_CACHE_HOME

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"
SUITES_DIR = DATA_DIR / "suites"
REFERENCE_DIR = DATA_DIR / "reference"


def cache_dir() -> Path:
    """The cache folder: ``$COSINE_PROBE_CACHE_DIR``, else the user cache dir.

    The user cache dir follows XDG (``$XDG_CACHE_HOME`` or ``~/.cache``) on
    Linux, ``~/Library/Caches`` on macOS and ``%LOCALAPPDATA%`` on Windows.
    """
    env = os.environ.get(CACHE_ENV_VAR)
    if env:
        return Path(env).expanduser()
    if os.name == "nt":
        base = Path(os.environ.get(ENV_LOCALAPPDATA.name, Path.home() / "AppData" / "Local"))
    elif os.uname().sysname == "Darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get(ENV_XDG_CACHE_HOME.name, Path.home() / ".cache"))
    return base / "cosine-probe"


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (symbolic and hard links, ``..`` and relative paths included), existing or not."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()
