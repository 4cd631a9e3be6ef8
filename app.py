"""TSQ Workbench: ``streamlit run app.py`` opens on the bundled sample data."""

import streamlit as st

from workbench import PAGES, refuse_unsafe_serving

st.set_page_config(page_title="TSQ Workbench", layout="wide")
navigation = st.navigation(
    [
        st.Page(page.path, title=page.title, default=name == "overview")
        for name, page in PAGES.items()
    ],
    position="hidden",  # each page draws the workbench's own (workbench.page_frame)
)
refuse_unsafe_serving()  # beyond loopback, no page runs without a data root
navigation.run()
