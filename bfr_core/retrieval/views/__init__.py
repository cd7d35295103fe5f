"""Retrieval views over one scope of the flat store (see ``base.View``)."""
