"""User-facing helpers run as `python -m tools.<name>` from the checkout."""
