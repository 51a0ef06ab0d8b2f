"""The Streamlit dashboard's shared pieces: the cached data layer and UI conventions."""
