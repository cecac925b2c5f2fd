"""The sidebar's device choice, through the real router and Compare page (AppTest, real MiniLM).

Here there is no GPU: ``auto`` encodes on the CPU and the page says so, and choosing
``cuda`` gives one clear message, scores nothing, and loses nothing the user
had (typed text, the last result).
"""

from __future__ import annotations

import pytest
from apptest_support import MINILM, compare_table, expected_cosine, open_page

from core.models.device import NO_CUDA
from ui.state import KEY_DEVICE

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture(scope="module")
def at():
    return open_page("views/compare.py", timeout=120)


def test_auto_is_the_default_and_encodes_on_the_cpu_here(at):
    assert at.selectbox(key=KEY_DEVICE).value == "auto"
    assert any(c.value == "Encoded on cpu." for c in at.caption)
    table = compare_table(at)
    assert table.loc[table["model id"] == MINILM, "cosine"].iloc[0] == pytest.approx(expected_cosine(A, B), abs=1e-4)


def test_choosing_cuda_without_a_gpu_says_so_and_keeps_the_last_result(at):
    at.selectbox(key=KEY_DEVICE).set_value("cuda").run()
    assert not at.exception
    assert any(w.value.startswith(f"{NO_CUDA}: pick auto or cpu") for w in at.sidebar.warning)
    at.text_area(key="cmp_text_b").input("The patient tolerates penicillin").run()
    next(b for b in at.button if b.label == "Compare").click().run()
    assert not at.exception
    assert [e.value for e in at.main.error] == [f"{NO_CUDA}. Pick auto or cpu as the device in the sidebar."]
    # Nothing lost: the typed text stays, and the last result is still shown.
    assert at.text_area(key="cmp_text_b").value == "The patient tolerates penicillin"
    table = compare_table(at)
    assert table.loc[table["model id"] == MINILM, "cosine"].iloc[0] == pytest.approx(expected_cosine(A, B), abs=1e-4)
    at.selectbox(key=KEY_DEVICE).set_value("cpu").run()
    next(b for b in at.button if b.label == "Compare").click().run()
    table = compare_table(at)
    assert table.loc[table["model id"] == MINILM, "cosine"].iloc[0] == pytest.approx(
        expected_cosine(A, "The patient tolerates penicillin"), abs=1e-4
    )
