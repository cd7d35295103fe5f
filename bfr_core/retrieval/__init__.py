"""Retrieval over one scope of the flat store: embeddings (``embed``), the views (``views/``: BM25,
dense, entity, session, hybrid; one-method Protocol in ``views.base``) and ``scope`` (every view of one
scope, built once and kept in a small LRU).

May import: ``store``, ``records``, ``config``, ``errors``, ``progress``, ``text``, ``dates``, ``lexicon``.
Never imports ``llm``, ``roles``, ``method``, ``baselines``, ``evaluation`` or ``pipeline``.
"""
