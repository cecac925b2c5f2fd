"""cosine-probe: where sentence-embedding similarity lies.

Router: draws the shared sidebar (models, threshold) and runs the page the
user picked; the pages are the records of ``ui/pages.py``.  Models load lazily, on the first page that needs them.
"""

import streamlit as st

from ui import pages
from ui.state import sidebar

st.set_page_config(page_title="cosine-probe", page_icon="🧭", layout="wide")

PAGES = [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path or None, default=p.is_home) for p in pages.PAGES]

page = st.navigation(PAGES, expanded=True)  # every page in the sidebar: collapsed, it shows 10 and hides the rest behind "View more"
sidebar()
page.run()
