"""The Streamlit dashboard: the only part of termgate that imports streamlit.

`streamlit_app/` is what `termgate dashboard` runs (`server.py`, Streamlit's server with the
session cookie's route; `app.py`, the router and shared sidebar; `views/`, one file per page);
the modules here are its data layer and shared widgets.
Nothing in the library imports this package.
"""

from pathlib import Path

__all__ = ["APP", "SERVER"]

APP = Path(__file__).resolve().parent / "streamlit_app" / "app.py"
"""The app's script (AppTest runs it); its pages are `views/*.py` beside it."""
SERVER = APP.with_name("server.py")
"""The script `streamlit run` is given: APP served with the dashboard's own route (`st.App`)."""
