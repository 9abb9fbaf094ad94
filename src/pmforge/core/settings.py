"""Forge's one settings object.

Every tunable lives here: provider choice, model names, chunk sizes, retrieval
counts, token budgets and paths. Values come from the environment and from a
`.env` file in the working directory (see `.env.example`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ModelPrice(BaseModel):
    """One model's rates in US dollars per million tokens (an embedding model has an input rate only)."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0  # a five-minute cache write
    cache_write_1h: float = 0.0  # an hour-long one


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FORGE_", env_file=".env", env_file_encoding="utf-8", extra="ignore",
        env_ignore_empty=True,
        # Aliased fields (FORGE_PROJECTS_DIR, ANTHROPIC_API_KEY…) also accept their own names in code:
        # Settings(projects_dir=…) must not be silently ignored.
        populate_by_name=True,
    )

    # --- where projects live ---
    projects_dir: Path = Field(Path("projects"), validation_alias=AliasChoices("FORGE_PROJECTS_DIR"))
    log_dir: Path = Path("logs")  # git-ignored; never the home directory
    log_max_bytes: int = 2_000_000  # forge.log rolls over at this size
    log_backups: int = 3  # rolled-over logs kept
    # How long a change waits for another window or command working on the same project before it says
    # "busy" (a turn waits for the project's turn slot separately: FORGE_CHAT_BUSY_WAIT_S).
    lock_wait_s: float = 30.0

    # --- providers ---
    llm: Literal["auto", "anthropic", "openai", "offline"] = "auto"
    # "hashing": words hashed into vectors, no model — instant and lexical, for tests of the plumbing.
    embeddings: Literal["auto", "voyage", "openai", "local", "hashing"] = "auto"
    anthropic_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("ANTHROPIC_API_KEY"))
    anthropic_base_url: str | None = Field(None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL"))
    voyage_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("VOYAGE_API_KEY"))
    voyage_base_url: str | None = Field(None, validation_alias=AliasChoices("VOYAGE_BASE_URL"))
    # Any OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp, Azure OpenAI): FORGE_LLM=openai
    # and/or FORGE_EMBEDDINGS=openai. Local servers need no key; unset base URL means OpenAI's own API.
    # OPENAI_BASE_URL: Ollama http://localhost:11434/v1, LM Studio :1234/v1, vLLM :8000/v1, llama.cpp
    # :8080/v1, Azure https://RESOURCE.openai.azure.com/openai/v1/ (OpenAI and Azure need OPENAI_API_KEY).
    openai_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=AliasChoices("OPENAI_BASE_URL"))
    chroma_host: str | None = Field(None, validation_alias=AliasChoices("CHROMA_HOST"))
    chroma_port: int = Field(8000, validation_alias=AliasChoices("CHROMA_PORT"))
    # Longest wait for a Chroma server to connect or answer one call: a paused or unreachable server gives
    # a one-sentence error instead of hanging a turn.
    chroma_timeout_s: float = 10.0
    # --- a team on one Chroma server ---
    author: str = ""  # the name this clone's turns and files carry (default: the OS user name)
    lease_seconds: float = 900.0  # how long a rebuild or repair holds the project's shared lease between renewals
    # Conversation memory gains a few vectors every turn; Chroma saves its vector index every N writes, and until
    # it does each write costs more than the last (Chroma's default, 1,000: 17 -> 43 ms per write; 100: flat ~9 ms).
    memory_sync_threshold: int = 100
    # A server database busy with another clone's write ("database is locked") is retried this long before a
    # change gives up with a clear message (nothing half-written: every write can simply run again).
    store_busy_wait_s: float = 10.0

    # --- models ---
    phase_b_model: str = "claude-sonnet-4-5"  # replies and tool calls
    phase_a_model: str = "claude-haiku-4-5"  # routing
    summary_model: str = "claude-haiku-4-5"  # turn and file summaries
    phase_b_max_output_tokens: int = 1500
    phase_a_max_output_tokens: int = 400  # the routing decision (a tool call)
    turn_summary_max_output_tokens: int = 150  # the summary that indexes a turn
    file_summary_max_output_tokens: int = 200  # the summary shown on an uploaded file's card
    anthropic_timeout_s: float = 60.0
    anthropic_max_retries: int = 4
    openai_model: str = "qwen2.5:7b"  # replies and tool calls: a model the server serves that can call tools
    openai_route_model: str = ""  # routing (empty: the reply model; local servers often serve one model)
    openai_summary_model: str = ""  # turn and file summaries (empty: the routing model)
    openai_embed_model: str = "nomic-embed-text"  # its dimensions are learned from the server's first answer
    openai_embed_batch_size: int = 64  # texts per embedding call
    openai_timeout_s: float = 120.0  # a local server may first have to load the model
    openai_max_retries: int = 4  # 408/409/429/5xx, timeouts and dropped connections, with backoff
    # Routing waits this long in all, with no retry: a slower model is answered by the rule router instead.
    openai_route_timeout_s: float = 30.0
    # The longest one call (retries and a slow stream included) may take before the turn fails in one sentence.
    openai_deadline_s: float = 300.0
    # A model that has called none of Forge's tools in this many replies in a row is said to record nothing
    # (once per project and process): it may not support tool calling, or the server needs --jinja.
    tools_unused_notice_turns: int = 3
    # A reply whose first words take longer than this is shown as waiting for the model, with the seconds.
    slow_model_notice_s: float = 3.0
    voyage_model: str = "voyage-3.5-lite"
    voyage_dimensions: int = 512
    voyage_batch_size: int = 128  # texts per embedding call
    voyage_batch_tokens: int = 100_000  # estimated tokens per embedding call
    voyage_max_attempts: int = 6
    voyage_backoff_s: float = 0.5  # first retry waits up to this, doubling per attempt (random jitter)
    voyage_max_wait_s: float = 30.0  # cap on one retry's wait
    voyage_timeout_s: float = 60.0  # one embedding call

    # Prompt caching: how long the static prefix (tool schemas, Forge's instructions) stays cached, "5m" or
    # "1h". An hour costs more to write (2× input instead of 1.25×) but survives a PM's pause between turns;
    # `forge bench cost` prices both.
    cache_ttl: Literal["5m", "1h"] = "5m"

    # --- prices, US dollars per million tokens, by model (the cost meter; update when rates change) ---
    # Set as JSON, {"model": {"input": …, "output": …}}, it replaces the whole table; a model missing from it
    # is shown with its tokens and no dollars.
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: {
        "claude-sonnet-4-5": ModelPrice(input=3.00, output=15.00, cache_read=0.30, cache_write=3.75,
                                        cache_write_1h=6.00),
        "claude-haiku-4-5": ModelPrice(input=1.00, output=5.00, cache_read=0.10, cache_write=1.25,
                                       cache_write_1h=2.00),
        "voyage-3.5-lite": ModelPrice(input=0.02),
        "voyage-3.5": ModelPrice(input=0.06),
    })

    # --- chunking (tokens, cl100k) ---
    leaf_max_tokens: int = 500
    parent_max_tokens: int = 2000
    merge_below_tokens: int = 100  # sections smaller than this merge with the next one
    max_upload_mb: float = 20.0
    embed_progress_passages: int = 16  # passages embedded between two moves of an upload's progress bar
    # Converting an upload runs in a worker process under these limits, so a hostile file is refused in one
    # sentence instead of hanging Forge. The timeout is per attempt (MarkItDown, then the plain Word reader).
    convert_timeout_s: float = 20.0
    convert_memory_mb: int = 2048  # address space of the worker; MarkItDown alone needs about 400 MB
    max_text_chars: int = 1_000_000  # converted text of one file (about 400 pages)
    # A file with more headings than this has its small sections grouped (named by their first and last
    # headings), so that it makes about this many sections at most.
    max_sections: int = 1000
    # Embedding windows one file gets: past it each passage is embedded from its start only (keyword search
    # still reads every word), so a file near max_text_chars is ready within a minute on a two-core laptop.
    max_embed_windows: int = 500
    # The app: after a reply ends, its Stop button stays in place (inert) this long before Copy and Retry
    # take that spot, so a click meant for Stop never lands on them.
    reply_settle_s: float = 1.0
    ui_stop_grace_s: float = 10.0  # `forge ui`: how long Streamlit may take to stop after a stop signal
    # `forge chat`: how long a message waits for another turn on the project, and a reply's save for an upload
    chat_busy_wait_s: float = 120.0
    delete_busy_wait_s: float = 5.0  # how long deleting a project waits for a reply being written in it

    # --- retrieval ---
    document_retriever: Literal["vector", "bm25", "hybrid"] = "hybrid"
    conversation_retriever: Literal["vector", "bm25", "hybrid"] = "hybrid"
    # A passage is offered to the model only if it clears one of these. Off-topic questions score below
    # 0.25 on public and own corpora with all-MiniLM-L6-v2; the keyword floor catches codes and names.
    min_similarity: float = 0.25
    min_similarity_follow: float = 0.20  # once one passage clears the floor, others this similar may join it
    min_keyword_coverage: float = 0.35  # share of the query's IDF mass a passage must hold to count on keywords
    # Hybrid fusion: "rrf" (reciprocal rank), "score" (scores / each list's best) or "minmax" (scores rescaled
    # between each list's worst and best candidate). Chosen by forge eval --as-turn (see README).
    fusion: Literal["rrf", "score", "minmax"] = "minmax"
    rrf_k: int = 60
    fusion_depth: int = 40  # "minmax" rescales between the best and the 40th candidate of each list
    vector_weight: float = 1.0
    keyword_weight: float = 1.0
    # Memory leans more on keywords: names and figures said in passing are what a later question repeats
    # (LoCoMo and Forge's own memory sets: +0.01 to +0.025 recall at 1.5; documents lose at 1.5).
    conversation_keyword_weight: float = 1.5
    leaf_candidates: int = 80  # leaf windows fetched from each retriever before packing passages
    document_passages: int = 16  # distinct passages shown at most (the budget usually binds first)
    section_whole_tokens: int = 400  # a section this small is shown whole; a longer one as matched passages
    passage_context_tokens: int = 60  # whole sentences added around a matched window, for context
    conversation_candidates: int = 50  # passages fetched from each retriever before grouping by turn
    conversation_turns: int = 16  # earlier turns shown at most (the budget usually binds first)
    # A turn gains this share of its better neighbour's score: an answer often shares no words with the
    # question before it (measured on LoCoMo and Forge's own sets: 0 vs 0.5, 0.754 → 0.80 within 1,000 tokens).
    conversation_neighbour_weight: float = 0.5
    supersede_ratio: float = 0.25  # a later restatement scoring this share of an earlier one (fused) outranks it
    supersede_overlap: float = 0.5  # share of the shorter message's words two turns must share to be restatements
    recent_turns: int = 3  # always-on conversational window
    probe_boost: float = 0.1  # relative score bonus for earlier turns of the active probe
    turn_side_whole_tokens: int = 120  # a side of an earlier turn this short is shown whole; longer, around the match

    # --- the turn ---
    tool_loop_max_rounds: int = 4
    paste_threshold_chars: int = 1500
    micro_synthesis_every: int = 6  # substantive turns between micro-syntheses (offline router)
    probe_max_asks: int = 3  # turns the offline router asks one open probe before moving to the next
    retrieval_query_chars: int = 300  # of the message, when the router writes no query of its own

    # --- token budgets (per prompt section) ---
    phase_a_budget: int = 2000
    phase_a_context_block: int = 300  # Phase A's own, smaller, slices of the state
    phase_a_routing_context: int = 150
    phase_a_recent_turns: int = 300
    phase_a_message: int = 250
    phase_b_budget: int = 12000  # every round of the tool loop, not just the first (turn/fit.py enforces it)
    # Round 1 is fitted to phase_b_budget minus this, for what a tool round appends: the assistant's
    # text and tool calls plus the tool results. 1,000 covers a typical round (a short note and a few
    # calls, ~300-600 tokens, results ~35 each), so round 2 usually goes out with the same context the
    # model just read. A round near the 1,500-token output cap is not reserved for on every turn (that
    # would cost every heavy turn 1,500 tokens of context for a rare case): before such a round the
    # loop re-trims the retrieved sections, which costs no cache — only the static prefix is cached.
    phase_b_round_reserve: int = 1000
    # Floors when fitting Phase B: a retrieved section or earlier turn is dropped rather than cut below
    # these (a 300-token span still holds a finding and its numbers), and the last exchange, the one the
    # PM's message answers, keeps at least this much of each side.
    fit_document_min_tokens: int = 300
    fit_turn_min_tokens: int = 200
    fit_recent_min_tokens: int = 120
    budget_context_block: int = 600
    budget_assumptions: int = 1500
    budget_skeleton: int = 800
    budget_routing_context: int = 500
    budget_recent_turns: int = 1500
    budget_probe: int = 800
    budget_documents: int = 3000
    budget_conversations: int = 1000

    def projects_root(self) -> Path:
        return Path(self.projects_dir).expanduser()


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (tests clear this cache after changing the environment)."""
    return Settings()
