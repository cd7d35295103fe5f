"""The LLM roles, one per module, each with its prompt beside it: ``decomposer`` (decompose),
``selector`` (select), ``tool_chooser`` (tool), ``answerer`` (answer, span), ``answer_judge`` (judge),
``sufficiency`` (suff, adjudicate), ``lme_judge`` (LongMemEval's official yes/no judge); plus what they share: ``prompting`` (fill, numbered snippets,
requests, reply checks), ``snippets`` (the "(date) speaker: text" format) and ``fit`` (fitting a set
into a model context).

May import: ``llm``, ``records``, ``text``, ``dates``, ``lexicon``, ``errors``.
Never imports ``retrieval``, ``method``, ``baselines``, ``evaluation``, ``pipeline`` or ``store``.
"""
