"""Benches whose JSON feeds a quality table (retrieval, the arms, the judges, the offline rules)."""
