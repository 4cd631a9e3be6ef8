"""TSQ Workbench: ``streamlit run app.py`` opens on the bundled sample data."""

import streamlit as st

from workbench_ui import refuse_unsafe_serving

st.set_page_config(page_title="TSQ Workbench", layout="wide")

navigation = st.navigation(
    [
        st.Page("app_pages/overview.py", title="Overview", default=True),
        st.Page("app_pages/trends.py", title="Trends"),
        st.Page("app_pages/session.py", title="Session"),
        st.Page("app_pages/turn.py", title="Turn"),
        st.Page("app_pages/catalog.py", title="Catalog"),
        st.Page("app_pages/judge.py", title="Judge"),
        st.Page("app_pages/agreement.py", title="Agreement"),
        st.Page("app_pages/adjudicate.py", title="Adjudicate"),
    ]
)
refuse_unsafe_serving()  # beyond loopback, no page runs without a data root
navigation.run()
