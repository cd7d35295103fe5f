"""The paper's comparison arms: ``topk`` (Mem0: BM25 top-k; A-Mem: dense top-k), ``com`` (CoM*) and
``mragent`` (MRAgent-Flat*).

May import: ``method`` (the arm contract and Stage I pieces they share), ``roles``, ``retrieval``,
``llm``, ``records``, ``config``, ``errors``, ``text``, ``dates``, ``lexicon``.
Never imports ``evaluation`` or ``pipeline``.
"""
