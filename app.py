"""TSQ Workbench: ``streamlit run app.py`` opens on the bundled sample data."""

import streamlit as st

st.set_page_config(page_title="TSQ Workbench", layout="wide")

navigation = st.navigation([st.Page("pages/overview.py", title="Overview", default=True)])
navigation.run()
