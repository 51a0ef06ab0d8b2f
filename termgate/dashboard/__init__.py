"""The Streamlit dashboard: the only part of termgate that imports streamlit.

`streamlit_app/` is what `termgate dashboard` runs (`app.py`, the router and shared sidebar,
and `views/`, one file per page); the modules here are its data layer and shared widgets.
Nothing in the library imports this package.
"""

from pathlib import Path

__all__ = ["APP"]

APP = Path(__file__).resolve().parent / "streamlit_app" / "app.py"
"""The script `streamlit run` is given; its pages are `views/*.py` beside it."""
