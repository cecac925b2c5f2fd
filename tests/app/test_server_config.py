"""Server settings: .streamlit/config.toml keeps XSRF on, an upload limit, and usage statistics off."""

from __future__ import annotations

import tomllib
from pathlib import Path

from streamlit import config as st_config

from core import constants

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"


def test_config_file_settings():
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["maxUploadSize"] == constants.MAX_UPLOAD_MB
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"


def test_streamlit_reads_them_as_written(monkeypatch):
    """Streamlit's own parser takes the file as we mean it (a typo'd key would be ignored silently)."""
    monkeypatch.chdir(ROOT)
    st_config.get_config_options(force_reparse=True)
    try:
        assert st_config.get_option("server.enableXsrfProtection") is True
        assert st_config.get_option("server.maxUploadSize") == constants.MAX_UPLOAD_MB
        assert st_config.get_option("browser.gatherUsageStats") is False
        assert st_config.get_option("client.showErrorDetails") == "none"
    finally:
        st_config.get_config_options(force_reparse=True)
