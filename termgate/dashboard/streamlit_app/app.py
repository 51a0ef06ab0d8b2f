"""termgate dashboard: navigation and the shared sidebar (sign-in, store) only; one file per page in views/."""

import streamlit as st

from termgate.dashboard import auth, busy, data, ui
from termgate.errors import StoreBusyError, UsageError

st.set_page_config(page_title="termgate", page_icon=":material/manage_search:", layout="wide")
busy.short_waits()

PAGES = [
    st.Page("views/runs.py", title="Runs", icon=":material/list_alt:", default=True),
    st.Page("views/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("views/query.py", title="Query history", icon=":material/history:", url_path="query"),
    st.Page("views/regressions.py", title="Regressions", icon=":material/flag:", url_path="regressions"),
    st.Page("views/import.py", title="Import", icon=":material/upload_file:", url_path="import"),
    st.Page("views/signoff.py", title="Sign-off", icon=":material/verified_user:", url_path="signoff"),
    st.Page("views/golden.py", title="Golden sets", icon=":material/fact_check:", url_path="golden"),
    st.Page("views/prompts.py", title="Prompts", icon=":material/rule:", url_path="prompts"),
]

navigation = st.navigation(PAGES)
busy_slot = st.empty()  # where "store busy" appears, above the page
try:
    auth.return_after_sign_in(PAGES)
    with st.sidebar:
        auth.sidebar(navigation.url_path)
        st.caption(f"Store: {ui.literal(data.shown_store())}")
        if st.button("Refresh data", help="Data refreshes by itself every 5 seconds"):
            data.clear()
    navigation.run()
except StoreBusyError as exc:
    busy.notice(busy_slot, exc)
except UsageError as exc:  # an unreachable server, a newer schema, not a termgate store: one line, no traceback
    busy_slot.error(f"The store cannot be read: {ui.literal(str(exc))}")
