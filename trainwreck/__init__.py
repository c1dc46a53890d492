"""trainwreck: evidence-first diagnosis of failed and stalled ML training runs."""
__version__ = "0.1.0"
