"""TSQ Workbench: ``streamlit run app.py`` opens on the bundled sample data."""

import streamlit as st

st.set_page_config(page_title="TSQ Workbench", layout="wide")

navigation = st.navigation(
    [
        st.Page("pages/overview.py", title="Overview", default=True),
        st.Page("pages/session.py", title="Session"),
        st.Page("pages/turn.py", title="Turn"),
        st.Page("pages/catalog.py", title="Catalog"),
        st.Page("pages/judge.py", title="Judge"),
        st.Page("pages/agreement.py", title="Agreement"),
        st.Page("pages/adjudicate.py", title="Adjudicate"),
    ]
)
navigation.run()
