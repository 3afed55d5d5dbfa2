"""Typed results and request options. Field names are the JSON contract's.

Results are dataclasses built from the server's JSON; each keeps the JSON it
came from in ``raw`` (not compared, not shown), so a Memory from an export
goes back through an import exactly as it was. Options are TypedDicts whose
keys are the request body's fields.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Mapping, Sequence, TypeVar, Union, get_args, get_origin, get_type_hints

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:
    from typing_extensions import NotRequired, Required, TypedDict

T = TypeVar("T")

Scope = Mapping[str, str]
"""Tenant dimensions such as user, agent, team, project, session."""

Time = Union[str, datetime]
"""An RFC 3339 time, a date (YYYY-MM-DD), an age such as ``7d`` or ``36h``, or a datetime."""


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        for arg in get_args(tp):
            if arg is type(None):
                continue
            return _convert(arg, value)
        return value
    if origin in (list, Sequence) and isinstance(value, list):
        (arg,) = get_args(tp) or (Any,)
        return [_convert(arg, v) for v in value]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
        return from_json(tp, value)
    return value


_hints: dict[type, dict[str, Any]] = {}


def from_json(cls: type[T], data: Mapping[str, Any]) -> T:
    """Build dataclass ``cls`` from a JSON object; absent fields take their defaults."""
    hints = _hints.get(cls)
    if hints is None:
        hints = _hints[cls] = get_type_hints(cls)
    kw: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name == "raw":
            continue
        if f.name in data:
            kw[f.name] = _convert(hints[f.name], data[f.name])
    obj = cls(**kw)
    object.__setattr__(obj, "raw", dict(data))
    return obj


def _raw() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


@dataclass
class Embedding:
    model: str
    dim: int = 0
    vector: list[float] | None = None
    raw: dict[str, Any] = _raw()


@dataclass
class Memory:
    """A stored memory, as GET /v1/memories/{id}, a listing or an export give it."""

    id: str
    text: str
    type: str
    created_at: str
    updated_at: str
    name: str = ""
    description: str = ""
    scene: str = ""
    scope: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    source: str = ""
    metadata: dict[str, Any] | None = None
    favorite: bool = False
    episode: str = ""
    seq: int = 0
    speaker: str = ""
    occurred_at: str | None = None
    supersedes: str = ""
    uses: int = 0
    demand: float = 0.0
    demand_at: str | None = None
    content_hash: str = ""
    embedding: Embedding | None = None
    raw: dict[str, Any] = _raw()


@dataclass
class Version(Memory):
    """One memory of a supersession chain (GET /v1/memories/{id}/history):
    the memory, who superseded it and when, and whether it is current."""

    superseded_by: str = ""
    superseded_at: str | None = None
    current: bool = False


@dataclass
class History:
    """Every version of what a memory says, oldest first."""

    versions: list[Version]
    raw: dict[str, Any] = _raw()


@dataclass
class Merged:
    """A memory not stored because ``id`` already held its text in its scope,
    and what the repeat changed on it (the rest it kept: ``kept``)."""

    index: int
    id: str
    tags_added: list[str] = field(default_factory=list)
    favorite_set: bool = False
    metadata_keys: list[str] = field(default_factory=list)
    type_set: str = ""
    kept: list[str] = field(default_factory=list)
    raw: dict[str, Any] = _raw()


@dataclass
class AddResult:
    """What an add answers: per memory given, the id of the memory that holds it.

    The by-id calls (get, update, delete, ...) take the AddResult of one
    memory as its id; ``id`` is that id. ``episode`` is the episode
    ``add_messages`` stored the messages as ("" otherwise)."""

    ids: list[str]
    embedded: int = 0
    deferred: str = ""
    merged: list[Merged] = field(default_factory=list)
    episode: str = ""
    raw: dict[str, Any] = _raw()

    @property
    def id(self) -> str:
        """The id of the one memory added (ValueError for a batch: use ``ids``)."""
        if len(self.ids) != 1:
            raise ValueError(f"id: this AddResult names {len(self.ids)} memories, not one; use .ids")
        return self.ids[0]


@dataclass
class ListPage:
    memories: list[Memory]
    next_cursor: str | None = None
    raw: dict[str, Any] = _raw()


@dataclass
class LegBM25:
    rank: int
    score: float
    raw: dict[str, Any] = _raw()


@dataclass
class LegVector:
    rank: int
    cosine: float
    read: float = 1.0
    """The share of the query's and the memory's letters the model reads
    (absent in the JSON, and 1.0 here, when the model reads both whole): the
    cosine counts towards relevance in that proportion."""
    raw: dict[str, Any] = _raw()


@dataclass
class Boosts:
    """The multipliers a result's score got. ``time`` is the date-phrase
    window's boost when the memory occurred inside one (absent in the JSON,
    and 1.0 here, when none applied)."""

    favorite: float = 1.0
    demand: float = 1.0
    time: float = 1.0
    raw: dict[str, Any] = _raw()


@dataclass
class Rerank:
    score: float
    pre_rank: int = 0
    raw: dict[str, Any] = _raw()


@dataclass
class MMR:
    pre_rank: int = 0
    redundancy: float = 0.0
    score: float = 0.0
    raw: dict[str, Any] = _raw()


@dataclass
class Explain:
    """Where a result's score came from; a leg that did not return the result is None."""

    bm25: LegBM25 | None = None
    vector: LegVector | None = None
    fused: float = 0.0
    """The fused score before boosts, of the fusion ``Response.fusion.method`` names."""
    rrf: float = 0.0
    """Deprecated: the same as ``fused`` under its first name (not an RRF score under rsf or dbsf)."""
    boosts: Boosts = field(default_factory=Boosts)
    relevance: float = 0.0
    rerank: Rerank | None = None
    mmr: MMR | None = None
    raw: dict[str, Any] = _raw()


@dataclass
class Neighbour:
    """A memory next to a result in its episode; ``offset`` is its place
    relative to the result (-1 the one before, 1 the one after)."""

    id: str
    offset: int
    text: str
    seq: int = 0
    speaker: str = ""
    occurred_at: str | None = None
    raw: dict[str, Any] = _raw()


@dataclass
class TimeWindow:
    """A date phrase a search read in its query and the span it names,
    [since, until): results that occurred inside it were boosted by ``boost``."""

    phrase: str
    since: str
    until: str
    boost: float
    raw: dict[str, Any] = _raw()


@dataclass
class Result:
    """One recalled memory with its score and explanation."""

    id: str
    text: str
    type: str
    created_at: str
    score: float = 0.0
    explain: Explain | None = None
    name: str = ""
    description: str = ""
    scene: str = ""
    scope: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    source: str = ""
    favorite: bool = False
    excerpt: str = ""
    episode: str = ""
    seq: int = 0
    speaker: str = ""
    occurred_at: str | None = None
    supersedes: str = ""
    superseded_by: str = ""
    neighbours: list[Neighbour] = field(default_factory=list)
    raw: dict[str, Any] = _raw()


@dataclass
class BriefItem(Result):
    reason: str = ""


@dataclass
class Degraded:
    stage: str
    reason: str
    raw: dict[str, Any] = _raw()


@dataclass
class Gated:
    """BM25's weight was scaled down by the keyword gate: its best match's
    keyword relevance (best) was below the model's gate (gate)."""

    gate: float
    best: float
    raw: dict[str, Any] = _raw()


@dataclass
class Fusion:
    method: str
    k: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)
    weight_source: str = ""
    candidates: int = 0
    gated: Gated | None = None
    raw: dict[str, Any] = _raw()


@dataclass
class SearchResponse:
    query: str
    strategy: str
    results: list[Result]
    timings_ms: dict[str, float] = field(default_factory=dict)
    qid: str = ""
    fusion: Fusion | None = None
    stages: list[str] | None = None
    degraded: list[Degraded] | None = None
    relevance_bar: float = 0.0
    min_relevance: float = 0.0
    below_bar: int = 0
    time: list[TimeWindow] = field(default_factory=list)
    raw: dict[str, Any] = _raw()


@dataclass
class Injection:
    results: list[Result]
    text: str
    strategy: str
    degraded: list[Degraded] | None = None
    min_relevance: float = 0.0
    raw: dict[str, Any] = _raw()


@dataclass
class Brief:
    items: list[BriefItem]
    text: str
    raw: dict[str, Any] = _raw()


@dataclass
class Skipped:
    line: int
    error: str
    raw: dict[str, Any] = _raw()


@dataclass
class ImportResult:
    ids: list[str] | None
    embedded: int = 0
    deferred: str = ""
    merged: list[Merged] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    raw: dict[str, Any] = _raw()


@dataclass
class Stats:
    memories: int
    favorites: int
    types: dict[str, int]
    embedded: dict[str, int]
    embedder: str
    path: str = ""
    file_bytes: int = 0
    vector_weight: float = 0.0
    weight_source: str = ""
    change_seq: int = 0
    bad_rows: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = _raw()


@dataclass
class Deleted:
    deleted: int
    raw: dict[str, Any] = _raw()


@dataclass
class Touched:
    touched: int
    raw: dict[str, Any] = _raw()


@dataclass
class Status:
    status: str
    raw: dict[str, Any] = _raw()


# ---- request options (the request body's fields) ----


class Filter(TypedDict, total=False):
    scope: Scope
    type: str
    scene: str
    tags: Sequence[str]
    source: str
    since: Time
    until: Time
    episode: str
    supersedes: str
    as_of: Time


class SearchOptions(Filter, total=False):
    qid: str
    limit: int
    mode: Literal["hybrid", "bm25", "vector"]
    candidates: int
    bm25_weight: float
    vector_weight: float
    fusion: Literal["rrf", "rsf", "dbsf", "native"]
    rrf_k: float
    keyword_gate: float
    rerank: bool
    hyde: bool
    mmr: bool
    mmr_lambda: float
    min_relevance: float
    model_bar: bool
    no_record: bool
    include_superseded: bool
    now: Time
    no_dates: bool
    neighbours: int


class InjectOptions(Filter, total=False):
    budget: int
    limit: int
    min_relevance: float
    no_record: bool
    neighbours: int
    """Turns shown before and after a memory of an episode: 0 or absent the default (1), negative none."""


class BriefOptions(Filter, total=False):
    budget: int
    limit: int
    no_record: bool
    neighbours: int


class MemoryFields(TypedDict, total=False):
    id: str
    name: str
    description: str
    type: str
    scene: str
    scope: Scope
    tags: Sequence[str] | None
    source: str
    metadata: Mapping[str, Any] | None
    favorite: bool
    episode: str
    seq: int
    speaker: str
    occurred_at: Time
    supersedes: Union[str, Memory, Result, AddResult]  # a memory or what names one, as the by-id calls take it
    created_at: Time
    updated_at: Time
    uses: int
    demand: float
    demand_at: Time | None
    content_hash: str
    embedding: Mapping[str, Any] | None


class MemoryInput(MemoryFields, total=False):
    text: Required[str]


class Patch(TypedDict, total=False):
    name: str
    description: str
    text: str
    type: str
    scene: str
    scope: Scope
    tags: Sequence[str]
    source: str
    metadata: Mapping[str, Any]
    favorite: bool
    episode: str
    seq: int
    speaker: str
    occurred_at: Time
    supersedes: Union[str, Memory, Result, AddResult]  # a memory or what names one, as the by-id calls take it


class _MessageFields(TypedDict, total=False):
    speaker: str
    occurred_at: Time
    seq: int
    metadata: Mapping[str, Any]


class Message(_MessageFields, total=False):
    """One turn of an episode (POST /v1/episodes)."""

    text: Required[str]


class ChatMessage(TypedDict, total=False):
    """A chat message as chat APIs (and mem0's client) give it, for add_messages;
    a Message ({speaker, text}) is taken too."""

    role: str
    content: Required[str]
    occurred_at: Time
    seq: int
    metadata: Mapping[str, Any]


class EpisodeOptions(TypedDict, total=False):
    """What every message's memory of an episode carries, and where its seqs start."""

    first_seq: int
    scope: Scope
    type: str
    tags: Sequence[str] | None
    source: str


Order = Literal["-created_at", "created_at", "-updated_at", "updated_at", "-uses", "uses", "id", "-id",
                "seq", "-seq", "occurred_at", "-occurred_at"]


class ListOptions(TypedDict, total=False):
    scope: Union[str, Scope]
    type: str
    scene: str
    source: str
    tag: Union[str, Sequence[str]]
    since: Time
    until: Time
    episode: str
    supersedes: str
    as_of: Time
    current: bool
    order: Order
    limit: int
    cursor: str


__all__ = [
    "AddResult", "Boosts", "Brief", "BriefItem", "BriefOptions", "Degraded", "Deleted", "Embedding",
    "EpisodeOptions", "Explain", "Filter", "Fusion", "Gated", "History", "ImportResult", "Injection", "InjectOptions",
    "LegBM25", "LegVector", "ListOptions", "ListPage", "Memory", "MemoryFields", "MemoryInput", "Merged",
    "Message", "MMR", "Neighbour", "NotRequired", "Order", "Patch", "Rerank", "Result", "Scope", "SearchOptions",
    "SearchResponse", "Skipped", "Stats", "Status", "Time", "TimeWindow", "Touched", "Version",
]
