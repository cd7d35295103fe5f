"""Settings as frozen dataclasses, with the paper's defaults; loadable from a TOML file.

Covers retrieval pool sizes (Appendix E), the :class:`Budget` record of the completion budget
(Section 4.3; an arm's budget is a named grid point C0..C9 from ``bfr_core.method.budgets``, chosen with
``--budget``, never a config file) and the LLM role settings. A TOML file may set ``[retrieval]`` and
``[llm]``; ``[budget]`` and unknown keys are refused with a message, so no setting is silently ignored.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Budget:
    rounds: int = 3  # B_step: completion rounds
    calls: int = 6  # B_call: retrieval calls across all rounds
    new: int = 30  # B_new: newly retained records across all rounds
    keep: int = 8  # k_keep: records the retention rule keeps per round (the grid sets 20 for MV, see budgets)


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    k: int = 10  # usual top-k cutoff of the one-shot baselines
    pool: int = 50  # N: Stage I expanded candidate pool
    prefilter: int = 20  # P: prefilter cap
    ground: int = 10  # b: source turns kept by grounding (E0)
    fallback: int = 3  # f: prefilter head used when selection is empty


@dataclass(frozen=True, slots=True)
class LLMConfig:
    provider: str = "rules"  # rules | anthropic | openai | local
    model: str = ""  # provider model id; empty = the provider's default
    base_url: str = ""  # OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server)
    temperature: float = 0.0  # every paper call is at temperature zero
    timeout_s: float = 60.0  # per request
    max_retries: int = 4  # on 429 / 5xx / timeouts, with exponential backoff
    concurrency: int = 2  # simultaneous requests per provider
    rpm: float = 0.0  # requests per minute per provider (0 = no limit)
    tpm: float = 0.0  # tokens per minute per provider, estimated prompt + max_tokens (0 = no limit)


@dataclass(frozen=True, slots=True)
class Config:
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)


def _section(cls: type, data: dict[str, Any], name: str) -> Any:
    known = {f.name for f in fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown key(s) in [{name}]: {', '.join(sorted(unknown))}")
    return replace(cls(), **data)


def load_config(path: str | Path | None = None) -> Config:
    """Defaults, overridden by a TOML file with [retrieval] and [llm] tables."""
    if path is None:
        return Config()
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    if "budget" in data:
        raise ValueError("[budget] is not read from a config file: budgets are the grid points C0..C9, "
                         "chosen per run with --budget (bfr_core.method.budgets)")
    unknown = set(data) - {"retrieval", "llm"}
    if unknown:
        raise ValueError(f"unknown table(s) {', '.join(sorted(unknown))}; a config file holds [retrieval] and [llm]")
    return Config(
        retrieval=_section(RetrievalConfig, data.get("retrieval", {}), "retrieval"),
        llm=_section(LLMConfig, data.get("llm", {}), "llm"),
    )
