"""What `termgate dashboard` serves: the Streamlit app (app.py, its pages in views/) and the
one route of the dashboard's own, which sets and deletes the HttpOnly session cookie of a
password sign-in (termgate.dashboard.sessions). `streamlit run` finds `app` and serves it."""

import streamlit as st

from termgate.dashboard.sessions import routes

app = st.App("app.py", routes=routes())
