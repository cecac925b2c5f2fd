"""Home (AppTest): where to start, one example number, the threshold in view, models marked before they are picked."""

from __future__ import annotations

from apptest_support import open_page

from core.models import registry


def test_start_here_links_every_main_page_and_gives_the_readme_example():
    at = open_page("views/home.py", timeout=120)
    links = {link.proto.page for link in at.get("page_link")}
    assert {"retrieval", "tune", "history", "compare", "failure-modes", "your-data"} <= links  # url paths
    example = [i.value for i in at.info if "0.947" in i.value]
    assert len(example) == 1 and "not allergic to penicillin" in example[0] and "all-MiniLM-L6-v2" in example[0]


def test_threshold_sits_above_the_picker_and_unloadable_models_are_marked():
    at = open_page("views/home.py", timeout=120)
    kinds = [node.type for node in at.sidebar]
    # The slider comes first, under the page list: a picker of four models pushed it below 800 px.
    assert kinds.index("slider") < kinds.index("multiselect")
    picker = at.multiselect(key="selected_models")
    shown = list(picker.options)
    unavailable = [name for name in registry.REGISTRY if registry.REGISTRY[name].source == registry.SOURCE_HUB]
    assert unavailable, "the registry has hub-only models"
    from core.models.loading import availability

    for name in registry.REGISTRY:
        label = next(o for o in shown if o.endswith(registry.short_name(name)) or registry.short_name(name) + " (" in o)
        avail = availability(name)
        assert label.startswith(("⛔", "🔒")) == (not avail.available), (name, label, avail.status)
