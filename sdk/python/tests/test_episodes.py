"""Conversations and time through both clients, beyond the shared vectors:
typed episode fields, datetimes as arguments, history and versions, time
windows and neighbours as typed results. Against a real engram serve."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import pytest

import engram_memory as em

from conftest import Server

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)

CHAT: list[em.Message] = [
    {"speaker": "user", "text": "I moved to Lisbon last month", "occurred_at": T0},
    {"speaker": "assistant", "text": "How do you like Lisbon so far?", "occurred_at": T0 + timedelta(seconds=5)},
    {"speaker": "user", "text": "The tram to work takes twenty minutes", "occurred_at": T0 + timedelta(minutes=1),
     "metadata": {"mood": "calm"}},
]


def test_episode_round_trip(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("c")) as c:
        first = c.add_episode("chat-1", CHAT, tags=["chat"])
        assert isinstance(first, em.AddResult)
        assert first.ids == ["chat-1:1", "chat-1:2", "chat-1:3"] and first.embedded == 3
        again = c.add_episode("chat-1", CHAT, tags=["chat"])
        assert again.ids == first.ids and again.embedded == 0
        # One turn changed: only it is written.
        changed = [*CHAT[:2], {**CHAT[2], "text": "The tram to work takes twenty-five minutes"}]
        assert c.add_episode("chat-1", changed, tags=["chat"]).embedded == 1
        more = c.add_episode("chat-1", [{"speaker": "user", "text": "Bye", "occurred_at": T0 + timedelta(minutes=2)}],
                             first_seq=4, tags=["chat"])
        assert more.ids == ["chat-1:4"]

        page = c.list_memories(episode="chat-1", order="seq")
        assert [(m.id, m.seq, m.speaker) for m in page.memories] == [
            ("chat-1:1", 1, "user"), ("chat-1:2", 2, "assistant"), ("chat-1:3", 3, "user"), ("chat-1:4", 4, "user")]
        m = page.memories[2]
        assert isinstance(m, em.Memory) and m.episode == "chat-1" and m.type == "turn" and m.tags == ["chat"]
        assert m.text == "The tram to work takes twenty-five minutes" and m.metadata == {"mood": "calm"}
        assert m.occurred_at == "2026-03-02T10:01:00Z"
        assert [x.id for x in c.list_memories(episode="chat-1", order="-seq", limit=2).memories] == ["chat-1:4", "chat-1:3"]
        # A datetime where a time is taken: since bounds created_at, now.
        assert c.list_memories(episode="chat-1", since=datetime.now(timezone.utc) + timedelta(days=1)).memories == []

        with pytest.raises(em.BadRequest) as ei:
            c.add_episode(" chat-1", CHAT)
        assert ei.value.code == "bad_request" and "whitespace" in ei.value.message
        with pytest.raises(em.UnknownField):
            c.add_episode("chat-2", [{"text": "hi", "role": "user"}])  # type: ignore[typeddict-unknown-key]
        with pytest.raises(em.Forbidden):
            c.add_episode("chat-2", [{"text": "hi"}], scope={"team": "b"})
        with pytest.raises(em.BadRequest):
            c.add("orphan", seq=3)


def chain(c: em.EngramClient) -> None:
    c.add_many([
        {"id": "city-1", "text": "Sam lives in Porto", "type": "fact",
         "occurred_at": datetime(2025, 1, 10, tzinfo=timezone.utc)},
        {"id": "city-2", "text": "Sam lives in Lisbon", "type": "fact", "supersedes": "city-1",
         "occurred_at": datetime(2025, 6, 1, tzinfo=timezone.utc)},
    ])
    c.add("Sam lives in Madrid", id="city-3", type="fact", supersedes="city-2",
          occurred_at=datetime(2026, 2, 1, tzinfo=timezone.utc))


def test_history_and_versions(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("c")) as c, em.EngramClient(server.url, key("b")) as b:
        chain(c)
        h = c.history("city-3")
        assert isinstance(h, em.History) and all(isinstance(v, em.Version) for v in h.versions)
        assert [(v.id, v.current, v.superseded_by, v.superseded_at, v.supersedes) for v in h.versions] == [
            ("city-1", False, "city-2", "2025-06-01T00:00:00Z", ""),
            ("city-2", False, "city-3", "2026-02-01T00:00:00Z", "city-1"),
            ("city-3", True, "", None, "city-2"),
        ]
        assert isinstance(h.versions[0], em.Memory) and h.versions[0].text == "Sam lives in Porto"
        assert [v.id for v in c.history("city-1").versions] == ["city-1", "city-2", "city-3"]
        with pytest.raises(em.NotFound):
            b.history("city-2")
        with pytest.raises(em.BadRequest):
            c.add("Sam lives in Rome", supersedes="city-9")
        # Versions go back as memories (their derived fields left out): the chain is restored.
        for v in h.versions:
            c.delete(v.id)
        assert c.add_many(h.versions).ids == ["city-1", "city-2", "city-3"]
        assert [v.raw for v in c.history("city-2").versions] == [v.raw for v in h.versions]

        # Listing: every version by default, what is current, what was current then.
        assert [m.id for m in c.list_memories(order="occurred_at").memories] == ["city-1", "city-2", "city-3"]
        assert [m.id for m in c.list_memories(current=True).memories] == ["city-3"]
        assert [m.id for m in c.list_memories(current=False, order="id").memories] == ["city-1", "city-2", "city-3"]
        assert [m.id for m in c.list_memories(as_of=datetime(2025, 7, 1, tzinfo=timezone.utc)).memories] == ["city-2"]
        assert [m.id for m in c.list_memories(supersedes="city-2").memories] == ["city-3"]

        # Searching: what is current, what was then, every version.
        q = "where does Sam live"
        now = c.search(q, mode="bm25", no_record=True)
        assert [r.id for r in now.results] == ["city-3"] and now.results[0].supersedes == "city-2"
        then = c.search(q, mode="bm25", as_of="2025-07-01", no_record=True)
        assert [(r.id, r.superseded_by) for r in then.results] == [("city-2", "city-3")]
        every = c.search(q, mode="bm25", include_superseded=True, no_record=True)
        assert {r.id: r.superseded_by for r in every.results} == {"city-1": "city-2", "city-2": "city-3", "city-3": ""}
        brief = c.brief(as_of=datetime(2025, 3, 1, tzinfo=timezone.utc))
        assert [i.id for i in brief.items] == ["city-1"] and brief.items[0].superseded_by == "city-2"


def test_time_windows_and_neighbours(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("c")) as c:
        chain(c)
        c.add_episode("chat-1", CHAT)
        q = "where did Sam live last week"
        resp = c.search(q, type="fact", mode="bm25", include_superseded=True, no_record=True,
                        now=datetime(2026, 2, 5, 12, tzinfo=timezone.utc))
        assert resp.time == [em.TimeWindow(phrase="last week", since="2026-01-26T00:00:00Z",
                                           until="2026-02-02T00:00:00Z", boost=1.5)]
        boosted = {r.id: r.explain.boosts.time for r in resp.results if r.explain}
        assert boosted == {"city-3": 1.5, "city-1": 1.0, "city-2": 1.0}
        assert resp.results[0].id == "city-3" and "time" not in resp.results[1].raw["explain"]["boosts"]
        plain = c.search(q, type="fact", mode="bm25", include_superseded=True, no_record=True, no_dates=True,
                         now=datetime(2026, 2, 5, 12, tzinfo=timezone.utc))
        assert plain.time == [] and all(r.explain and r.explain.boosts.time == 1.0 for r in plain.results)

        hit = c.search("tram to work", mode="bm25", episode="chat-1", neighbours=2, limit=1, no_record=True)
        r = hit.results[0]
        assert (r.id, r.episode, r.seq, r.speaker, r.occurred_at) == ("chat-1:3", "chat-1", 3, "user", "2026-03-02T10:01:00Z")
        assert r.neighbours == [
            em.Neighbour(id="chat-1:1", offset=-2, seq=1, speaker="user", text="I moved to Lisbon last month",
                         occurred_at="2026-03-02T10:00:00Z"),
            em.Neighbour(id="chat-1:2", offset=-1, seq=2, speaker="assistant", text="How do you like Lisbon so far?",
                         occurred_at="2026-03-02T10:00:05Z"),
        ]
        assert c.search("tram to work", mode="bm25", episode="chat-1", limit=1, no_record=True).results[0].neighbours == []
        with pytest.raises(em.BadRequest):
            c.search("tram", neighbours=21)

        inj = c.inject("tram to work", episode="chat-1", limit=1, min_relevance=0.1, no_record=True)
        assert [n.id for n in inj.results[0].neighbours] == ["chat-1:2"]  # the default: one each side
        none = c.inject("tram to work", episode="chat-1", limit=1, min_relevance=0.1, neighbours=-1, no_record=True)
        assert none.results[0].neighbours == []
        brief = c.brief(episode="chat-1", neighbours=1)
        assert {i.id: [n.offset for n in i.neighbours] for i in brief.items} == {
            "chat-1:1": [1], "chat-1:2": [-1, 1], "chat-1:3": [-1]}

        # Update moves a memory into an episode and back out.
        c.add("Remember the milk", id="note-1")
        m = c.update("note-1", episode="chat-1", seq=4, speaker="user", occurred_at=T0 + timedelta(minutes=3))
        assert (m.episode, m.seq, m.speaker, m.occurred_at) == ("chat-1", 4, "user", "2026-03-02T10:03:00Z")
        assert [x.id for x in c.list_memories(episode="chat-1", order="seq").memories][-1] == "note-1"
        out = c.update("note-1", episode="")
        assert (out.episode, out.seq) == ("", 0)


def test_async_episodes(server: Server, key: Callable[[str], str]) -> None:
    async def run() -> None:
        async with em.AsyncEngramClient(server.url, key("c")) as c:
            res = await c.add_episode("chat-1", CHAT)
            assert res.ids == ["chat-1:1", "chat-1:2", "chat-1:3"]
            assert (await c.add_episode("chat-1", CHAT)).embedded == 0
            await c.add("Sam lives in Porto", id="p", occurred_at=T0 - timedelta(days=30))
            await c.add("Sam lives in Lisbon", id="l", supersedes="p", occurred_at=T0)
            h = await c.history("p")
            assert [(v.id, v.current) for v in h.versions] == [("p", False), ("l", True)]
            page = await c.list_memories(episode="chat-1", order="-seq", current=True)
            assert [m.seq for m in page.memories] == [3, 2, 1]
            hit = await c.search("tram to work", mode="bm25", neighbours=1, limit=1, no_record=True)
            assert [n.id for n in hit.results[0].neighbours] == ["chat-1:2"]
            with pytest.raises(em.BadRequest):
                await c.add_episode("chat-1 ", CHAT)
    asyncio.run(run())


def test_retrieval_metadata(server: Server, key: Callable[[str], str]) -> None:
    pytest.importorskip("langchain_core")
    from engram_memory.langchain import EngramRetriever

    with em.EngramClient(server.url, key("c")) as c:
        c.add_episode("chat-1", CHAT)
        docs = EngramRetriever(client=c, k=1, search_options={"mode": "bm25", "neighbours": 1}).invoke("tram to work")
        meta: dict[str, Any] = docs[0].metadata
        assert (meta["episode"], meta["seq"], meta["speaker"], meta["occurred_at"]) == \
            ("chat-1", 3, "user", "2026-03-02T10:01:00Z")
        assert [n["id"] for n in meta["neighbours"]] == ["chat-1:2"]
