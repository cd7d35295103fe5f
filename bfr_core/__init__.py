"""BFR Workbench core: flat turn store, retrieval views, FCA-MS and budgeted completion, metrics.

Never imports streamlit; the app in ``app.py`` and ``pages/`` is a thin layer over this package.
"""

__version__ = "0.1.0"
