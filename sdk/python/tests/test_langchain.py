"""The LangChain retriever against a real engram serve."""

from __future__ import annotations

import asyncio
from typing import Callable

import pytest

pytest.importorskip("langchain_core")

import engram_memory as em  # noqa: E402
from engram_memory.langchain import EngramRetriever  # noqa: E402

from conftest import Server  # noqa: E402


def test_retriever(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("a1")) as c, em.EngramClient(server.url, key("b")) as other:
        c.add("The deploy key lives in the vault", id="k1", type="fact", tags=["ops"])
        c.add("Lunch is at noon", id="k2")
        other.add("The deploy key of team b is in the safe", id="k3")
        r = EngramRetriever(client=c, k=1, search_options={"mode": "bm25"})
        docs = r.invoke("where is the deploy key")
        assert [d.id for d in docs] == ["k1"]
        d = docs[0]
        assert d.page_content == "The deploy key lives in the vault"
        assert d.metadata["id"] == "k1" and d.metadata["type"] == "fact" and d.metadata["tags"] == ["ops"]
        assert d.metadata["strategy"] == "bm25"
        ex = d.metadata["explain"]
        assert set(ex) >= {"bm25", "vector", "fused", "rrf", "boosts", "relevance"} and ex["bm25"]["rank"] == 1
        # Only what clears the model's relevance bar, unless told otherwise;
        # never team b's.
        hybrid = EngramRetriever(client=c, k=5).invoke("deploy key")
        assert {x.id for x in hybrid} == {"k1"}
        every = EngramRetriever(client=c, k=5, search_options={"model_bar": False}).invoke("deploy key")
        assert {x.id for x in every} == {"k1", "k2"}

        async def run() -> None:
            async with em.AsyncEngramClient(server.url, key("a1")) as ac:
                ar = EngramRetriever(client=c, async_client=ac, k=1, search_options={"mode": "bm25"})
                adocs = await ar.ainvoke("where is the deploy key")
                assert [x.id for x in adocs] == ["k1"]
        asyncio.run(run())
