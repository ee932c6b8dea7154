"""Edits of the user's records: the write side."""
