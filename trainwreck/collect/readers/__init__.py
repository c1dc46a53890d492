"""Readers: one module per artifact format. See trainwreck/collect/__init__.py for the protocol."""
