"""`python -m graphjit`: the command line."""

from .cli import main

main()
