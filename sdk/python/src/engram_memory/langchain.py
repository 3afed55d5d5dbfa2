"""A LangChain retriever over Engram's search (``pip install engram-memory[langchain]``).

Each result becomes a ``Document`` whose page_content is the memory's text and
whose metadata holds its id, type, scope, tags, score and the search's
explanation (``explain``: bm25, vector, fused, boosts, relevance, ...) as plain
JSON, plus the strategy that ran; a memory of an episode adds its episode,
seq, speaker and occurred_at (and ``neighbours``, as JSON, when the search
asked for them), a superseded one superseded_by.
"""

from __future__ import annotations

from typing import Any, Optional

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from ._async import AsyncEngramClient
from ._client import EngramClient
from ._types import Result, SearchResponse


def to_document(r: Result, resp: SearchResponse) -> Document:
    """A search result as a LangChain Document (explain in metadata)."""
    meta: dict[str, Any] = {
        "id": r.id,
        "type": r.type,
        "score": r.score,
        "created_at": r.created_at,
        "explain": r.raw.get("explain"),
        "strategy": resp.strategy,
    }
    for k in ("name", "description", "scene", "source", "excerpt", "episode", "seq", "speaker", "occurred_at",
              "supersedes", "superseded_by"):
        if getattr(r, k):
            meta[k] = getattr(r, k)
    if r.neighbours:
        meta["neighbours"] = r.raw.get("neighbours")
    if r.scope:
        meta["scope"] = dict(r.scope)
    if r.tags:
        meta["tags"] = list(r.tags)
    if r.favorite:
        meta["favorite"] = True
    return Document(page_content=r.text, metadata=meta, id=r.id)


class EngramRetriever(BaseRetriever):
    """Retrieves memories from an Engram server for a query.

    ``client`` (sync) serves ``invoke``; ``async_client``, when given, serves
    ``ainvoke`` (else ``ainvoke`` runs the sync client in a thread). ``k`` is
    the number of results, of those at or above the model's relevance bar
    (``model_bar``, on unless ``search_options`` turns it off);
    ``search_options`` are any further fields of the search (scope, type,
    tags, mode, min_relevance, no_record, ...).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: EngramClient
    async_client: Optional[AsyncEngramClient] = None
    k: int = 4
    search_options: dict[str, Any] = Field(default_factory=dict)

    def _options(self) -> dict[str, Any]:
        # Documents for an LLM's context: only what clears the model's
        # relevance bar, as inject does (search_options may say otherwise:
        # model_bar=False, or a min_relevance).
        return {"limit": self.k, "model_bar": True, **self.search_options}

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        resp = self.client.search(query, **self._options())
        return [to_document(r, resp) for r in resp.results]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        resp = await self.async_client.search(query, **self._options())
        return [to_document(r, resp) for r in resp.results]


__all__ = ["EngramRetriever", "to_document"]
