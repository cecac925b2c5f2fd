"""cosine-probe: where sentence-embedding similarity lies.

Router: draws the shared sidebar (models, threshold) and runs the page the
user picked; the pages are the records of ``ui/pages.py``.  The default models' weights load in a background
thread once the first page is drawn (``ui/warmup.py``); any other model loads on the first page that needs it.
"""

import streamlit as st

from ui import pages, warmup
from ui.state import sidebar

st.set_page_config(page_title="cosine-probe", page_icon="🧭", layout="wide")

PAGES = [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path or None, default=p.is_home) for p in pages.PAGES]

page = st.navigation(PAGES, expanded=True)  # every page in the sidebar: collapsed, it shows 10 and hides the rest behind "View more"
# The background loads wait for a quiet moment: their imports would slow a page's draw on 2 cores.
warmup.page_run_started()
try:
    sidebar()
    page.run()
finally:  # a rerun or a stop ends a run too
    warmup.page_run_ended()
