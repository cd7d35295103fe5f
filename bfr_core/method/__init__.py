"""The paper's method and ours: the arm contract (``arms``), the budget grid (``budgets``), formal
concept analysis (``fca``), requirements (``requirements``), Stage I FCA-MS (``stage1``), Stage II
budgeted completion (``stage2``) and our own arm (``ours``).

May import: ``roles``, ``retrieval``, ``llm``, ``records``, ``config``, ``errors``, ``text``, ``dates``,
``lexicon``. Never imports ``baselines``, ``evaluation``, ``pipeline``, ``ingest`` or ``store``.
"""
