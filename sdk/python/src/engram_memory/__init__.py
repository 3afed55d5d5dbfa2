"""Python client of the Engram memory server: ``EngramClient`` (sync) and
``AsyncEngramClient`` over httpx, typed results, exceptions named after the
API's error codes, and (extra ``langchain``) ``engram_memory.langchain.EngramRetriever``."""

from ._async import AsyncEngramClient
from ._client import EngramClient
from ._core import DEFAULT_URL, __version__
from ._errors import (
    Ambiguous,
    BadRequest,
    EngramError,
    ExportIncomplete,
    Forbidden,
    Internal,
    InvalidJSON,
    MethodNotAllowed,
    NotFound,
    Timeout,
    TooLarge,
    TooManyRequests,
    Unauthorized,
    UnknownField,
    Unavailable,
    Unreachable,
    UnsupportedMediaType,
)
from ._types import (
    MMR,
    AddResult,
    Boosts,
    Brief,
    BriefItem,
    BriefOptions,
    Degraded,
    Deleted,
    Embedding,
    Explain,
    Filter,
    Fusion,
    ImportResult,
    Injection,
    InjectOptions,
    LegBM25,
    LegVector,
    ListOptions,
    ListPage,
    Memory,
    MemoryFields,
    MemoryInput,
    Merged,
    Patch,
    Rerank,
    Result,
    SearchOptions,
    SearchResponse,
    Skipped,
    Stats,
    Status,
    Touched,
)

__all__ = [
    "DEFAULT_URL", "__version__", "EngramClient", "AsyncEngramClient",
    "EngramError", "BadRequest", "InvalidJSON", "UnknownField", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "Ambiguous", "TooLarge", "UnsupportedMediaType", "Timeout", "Unavailable", "Internal",
    "TooManyRequests", "Unreachable", "ExportIncomplete",
    "AddResult", "Boosts", "Brief", "BriefItem", "BriefOptions", "Degraded", "Deleted", "Embedding", "Explain",
    "Filter", "Fusion", "ImportResult", "Injection", "InjectOptions", "LegBM25", "LegVector", "ListOptions",
    "ListPage", "Memory", "MemoryFields", "MemoryInput", "Merged", "MMR", "Patch", "Rerank", "Result",
    "SearchOptions", "SearchResponse", "Skipped", "Stats", "Status", "Touched",
]
