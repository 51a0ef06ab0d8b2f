"""`python -m termgate` runs the CLI (the dashboard's Import page uses this in a child process)."""

from .cli import main

main()
