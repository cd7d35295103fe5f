"""Evaluation: arms x questions (``evaluate``, resumable), answers and judgments of a run
(``answers``), the budget sweep (``sweep``), measures (``metrics``), tests (``stats``), report tables
(``report``), human sufficiency labels (``labels``) and question samples (``sampling``).

May import everything below it: ``pipeline``, ``method``, ``baselines``, ``roles``, ``retrieval``,
``ingest``, ``llm``, ``store`` and the base modules. Never imports ``commands`` or ``cli``.
"""
