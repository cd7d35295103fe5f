"""Equivalence and integrity tools: rows before and after a change, stores alike, records lost."""
