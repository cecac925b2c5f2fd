"""The one page list: a record per page, read by the router (``app.py``), the home page and the tests.

Adding a page is adding one :class:`PageRecord` here (and its module in ``views/``): the sidebar, Home's
"Start here" links, the browser tests' titles and the common test over pages (tests/ui/test_pages.py) follow.
No streamlit import, so the browser tests read the list without starting one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageRecord:
    """One page of the app.

    Attributes:
        path: its module, relative to the app folder (``views/compare.py``).
        title: its name in the sidebar and the browser tab.
        icon: its emoji in the sidebar and on Home.
        url_path: the URL it opens at ("" for Home, the default page).
        blurb: what Home's "Start here" says of it (Home itself has none).
        heading: words its title (the page's h1) shows, what the browser tests look for.
        records_history: whether its runs are stored in the run history (the History page names these pages).
    """

    path: str
    title: str
    icon: str
    url_path: str
    blurb: str
    heading: str
    records_history: bool = False

    @property
    def is_home(self) -> bool:
        """Whether this is the default page (Home), the one the router opens at ``/``."""
        return self.url_path == ""


# In sidebar order; Home first.
PAGES: tuple[PageRecord, ...] = (
    PageRecord("views/home.py", "Home", "🏠", "", "", "cosine-probe"),
    PageRecord("views/compare.py", "Compare", "⚖️", "compare", "Compare two sentences under every model", "Compare"),
    PageRecord("views/perturb.py", "Perturbations", "🧬", "perturb", "Generate failure-mode variants of your sentence", "Perturbations"),
    PageRecord("views/tokenizer.py", "Tokenizer", "🔤", "tokenizer", "See how tokenizers split invented words", "Tokeni"),
    PageRecord("views/oov.py", "OOV robustness", "🧪", "oov", "Reproduce the OOV-robustness paper", "OOV", records_history=True),
    PageRecord(
        "views/invented.py",
        "Invented words",
        "🔮",
        "invented-words",
        "Invent words and measure OOV with k of them per entity",
        "Invented words",
    ),
    PageRecord(
        "views/failure_modes.py",
        "Failure modes",
        "🚨",
        "failure-modes",
        "Reproduce the failure-modes paper",
        "Failure",
        records_history=True,
    ),
    PageRecord(
        "views/retrieval.py",
        "Retrieval",
        "🎯",
        "retrieval",
        "Rank passages: does a contradiction outrank the paraphrase?",
        "Retrieval",
        records_history=True,
    ),
    PageRecord(
        "views/tune.py", "Tune", "🛠️", "tune", "Fine-tune a model on its failures and see what it costs", "Tune", records_history=True
    ),
    PageRecord("views/your_data.py", "Your data", "📄", "your-data", "Test your own sentence pairs", "Your", records_history=True),
    PageRecord(
        "views/your_corpus.py",
        "Your corpus",
        "🔎",
        "your-corpus",
        "Audit your corpus for passages a retriever cannot tell apart",
        "Your corpus",
        records_history=True,
    ),
    PageRecord(
        "views/index_settings.py",
        "Index settings",
        "🗜️",
        "index-settings",
        "What float16, int8, binary or fewer dimensions cost",
        "Index settings",
        records_history=True,
    ),
    PageRecord("views/papers.py", "Papers", "📚", "papers", "Published figures vs recomputed", "Paper"),
    PageRecord("views/history.py", "History", "🗂️", "history", "Earlier runs: compare, pin, export a report", "History"),
)


def linked_pages() -> tuple[PageRecord, ...]:
    """Every page but Home, in sidebar order: Home's "Start here" links."""
    return tuple(page for page in PAGES if not page.is_home)
