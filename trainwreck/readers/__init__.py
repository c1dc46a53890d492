"""Readers: one module per artifact format. See trainwreck/collect.py for the protocol."""
