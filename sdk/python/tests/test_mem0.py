"""What a mem0 user reaches for, through both clients against a real engram
serve: add's answer passed on to the by-id calls, chat messages
({role, content}) added as an episode, history, reset; and bad arguments
refused with the parameter named."""

from __future__ import annotations

import asyncio
import re
from typing import Any, Callable

import pytest

import engram_memory as em

from conftest import Server


def refuses(param: str, fn: Callable[[], Any], exc: type[Exception] = TypeError) -> str:
    """fn raises exc whose message starts with the parameter's name; its message."""
    with pytest.raises(exc) as e:
        fn()
    msg = str(e.value)
    assert msg.startswith(param + ":"), msg
    return msg


def test_add_answer_goes_to_the_by_id_calls(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("c")) as c:
        added = c.add("The staging database is on port 5433", tags=["ops"])
        assert added.ids == [added.id]
        assert c.get(added).text == "The staging database is on port 5433"
        assert c.update(added, tags=["ops", "db"]).tags == ["db", "ops"]
        assert c.favorite(added).favorite is True
        assert c.touch(added).touched == 1
        # A Memory, a search Result and a dict with "id" name themselves too.
        m = c.get(added.id)
        assert c.get(m).id == added.id
        r = c.search("staging database port", mode="bm25", no_record=True).results[0]
        assert c.get(r).id == added.id
        assert c.get({"id": added.id}).id == added.id
        # An exact repeat is merged: its answer names the memory that holds it.
        assert c.add("The staging database is on port 5433", tags=["ops"]).id == added.id
        moved = c.add("The staging database moved to port 5434", supersedes=added)
        assert [(v.id, v.current) for v in c.history(moved).versions] == [(added.id, False), (moved.id, True)]
        assert c.delete(moved).deleted == 1
        assert c.delete(added).deleted == 1
        with pytest.raises(em.NotFound):
            c.get(added)

        many = c.add_many([{"text": "one"}, {"text": "two"}])
        assert refuses("id", lambda: many.id, ValueError) == "id: this AddResult names 2 memories, not one; use .ids"
        assert refuses("id", lambda: c.get(many), ValueError) == (
            "id: an AddResult of 2 memories names no single one; pass one of its ids")
        assert c.update(many.ids[1], supersedes=c.get(many.ids[0])).supersedes == many.ids[0]
        refuses("supersedes", lambda: c.update(many.ids[1], supersedes=5))  # type: ignore[arg-type]
        refuses("memories[1].supersedes", lambda: c.add_many([{"text": "x"}, {"text": "y", "supersedes": []}]))  # type: ignore[list-item]
        refuses("id", lambda: c.get(""), ValueError)
        for bad in (42, None, ["x"], {}, {"id": 7}, 3.5):
            refuses("id", lambda: c.get(bad))  # type: ignore[arg-type]
        assert refuses("id", lambda: c.delete(3.5)) == (  # type: ignore[arg-type]
            "id: want a memory id (str), a Memory, a Result or what add() returned, not float 3.5")
        assert "add_messages" in refuses("text", lambda: c.add([{"role": "user", "content": "hi"}]))  # type: ignore[arg-type]
        refuses("text", lambda: c.add(b"bytes"))  # type: ignore[arg-type]
        refuses("supersedes", lambda: c.add("x", supersedes=12))  # type: ignore[arg-type]
        refuses("memories", lambda: c.add_many("nope"))  # type: ignore[arg-type]
        refuses("memories[1]", lambda: c.add_many([{"text": "a"}, "b"]))  # type: ignore[list-item]
        c.delete_scope({"team": "c"})


def test_add_messages(server: Server, key: Callable[[str], str]) -> None:
    chat: list[em.ChatMessage] = [
        {"role": "user", "content": "I'm allergic to peanuts", "occurred_at": "2026-04-01T09:00:00Z"},
        {"role": "assistant", "content": "Noted: no peanuts in the recipes."},
    ]
    with em.EngramClient(server.url, key("c")) as c:
        res = c.add_messages(chat, scope={"user": "sam"}, tags=["chat"])
        assert re.fullmatch(r"chat-[0-9a-f]{12}", res.episode), res.episode
        assert res.ids == [f"{res.episode}:1", f"{res.episode}:2"]
        page = c.list_memories(episode=res.episode, order="seq")
        assert [(m.seq, m.speaker, m.text, m.type, m.scope, m.tags) for m in page.memories] == [
            (1, "user", "I'm allergic to peanuts", "turn", {"team": "c", "user": "sam"}, ["chat"]),
            (2, "assistant", "Noted: no peanuts in the recipes.", "turn", {"team": "c", "user": "sam"}, ["chat"]),
        ]
        assert page.memories[0].occurred_at == "2026-04-01T09:00:00Z"
        # The same conversation grown: only the new message is written.
        grown = c.add_messages([*chat, {"role": "user", "content": "And to shellfish"}], episode=res.episode,
                               scope={"user": "sam"}, tags=["chat"])
        assert (grown.ids, grown.embedded, grown.episode) == ([*res.ids, f"{res.episode}:3"], 1, res.episode)
        # {speaker, text} as add_episode takes them work too.
        named = c.add_messages([{"speaker": "user", "text": "Call me Sam"}], episode="named-chat")
        assert named.ids == ["named-chat:1"] and c.get(named).speaker == "user"
        hit = c.search("peanuts allergy", episode=res.episode, mode="bm25", no_record=True)
        assert hit.results[0].id == f"{res.episode}:1"

        refuses("messages", lambda: c.add_messages({"role": "user", "content": "hi"}))  # type: ignore[dict-item]
        refuses("messages", lambda: c.add_messages([]), ValueError)
        refuses("messages[0]", lambda: c.add_messages(["hi"]))  # type: ignore[list-item]
        refuses("messages[1].content", lambda: c.add_messages(
            [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "text", "text": "b"}]}]))  # type: ignore[typeddict-item]
        refuses("messages[0].role", lambda: c.add_messages([{"role": 1, "content": "a"}]))  # type: ignore[typeddict-item]
        refuses("messages[0]", lambda: c.add_messages([{"role": "user"}]))  # type: ignore[list-item]
        refuses("messages[0].name", lambda: c.add_messages([{"role": "user", "content": "a", "name": "sam"}]))  # type: ignore[list-item]
        refuses("messages[0]", lambda: c.add_messages([{"role": "user", "speaker": "user", "content": "a"}]))  # type: ignore[list-item]
        refuses("episode", lambda: c.add_messages([{"role": "user", "content": "a"}], episode=""))
        with pytest.raises(em.Forbidden):
            c.add_messages([{"role": "user", "content": "a"}], scope={"team": "b"})
        c.delete_scope({"team": "c"})


def test_reset(server: Server, key: Callable[[str], str]) -> None:
    with em.EngramClient(server.url, key("c")) as c:
        c.add("Ana likes tea", scope={"user": "ana"})
        old = c.add("Ana lives in Faro", scope={"user": "ana"})
        c.add("Ana lives in Braga", scope={"user": "ana"}, supersedes=old.id)
        c.add_messages([{"role": "user", "content": "hello"}], scope={"user": "ana"})
        bo = c.add("Bo likes coffee", scope={"user": "bo"})
        assert c.reset({"user": "ana"}).deleted == 4
        assert c.reset("user=ana").deleted == 0
        assert [m.id for m in c.list_memories().memories] == [bo.id]
        refuses("scope", lambda: c.reset(""), ValueError)
        refuses("scope", lambda: c.reset({}), ValueError)
        refuses("scope", lambda: c.reset(["user=ana"]))  # type: ignore[arg-type]
        with pytest.raises(em.Forbidden):
            c.reset({"team": "b"})
        # Without a scope: every memory of the API key's scope, and nothing of another key's.
        with em.EngramClient(server.url, key("b")) as b:
            theirs = b.add("Team b keeps this")
            c.add("Cy likes rain", scope={"user": "cy"})
            assert c.reset().deleted == 2
            assert c.list_memories().memories == []
            assert c.reset().deleted == 0
            assert b.get(theirs).text == "Team b keeps this"


def test_reset_without_keys(engram_bin: str, vectors: dict[str, Any]) -> None:
    """A server without keys refuses reset() (it would be the whole store) and deletes nothing."""
    s = Server(engram_bin, [], vectors["embedder"])
    try:
        with em.EngramClient(s.url, "") as c:
            kept = c.add("Everyone's memory", scope={"user": "ana"})
            with pytest.raises(em.BadRequest, match="whole store"):
                c.reset()
            assert c.get(kept).text == "Everyone's memory"
            assert c.reset("user=ana").deleted == 1
    finally:
        s.stop()


def test_async(server: Server, key: Callable[[str], str]) -> None:
    async def run() -> None:
        async with em.AsyncEngramClient(server.url, key("c")) as c:
            added = await c.add("Ana lives in Faro", scope={"user": "ana"})
            assert (await c.get(added)).text == "Ana lives in Faro"
            later = await c.add("Ana lives in Braga", scope={"user": "ana"}, supersedes=added.id)
            assert [v.id for v in (await c.history(added)).versions] == [added.id, later.id]
            res = await c.add_messages([{"role": "user", "content": "hello"}], scope={"user": "ana"})
            assert res.ids == [f"{res.episode}:1"] and (await c.get(res)).speaker == "user"
            with pytest.raises(TypeError, match=r"^id: want a memory id"):
                await c.delete(None)  # type: ignore[arg-type]
            with pytest.raises(ValueError, match=r"^scope: empty; reset\(\) without a scope"):
                await c.reset("")
            assert (await c.reset({"user": "ana"})).deleted == 3
            await c.add("Cy likes rain")
            assert (await c.reset()).deleted == 1
            assert (await c.list_memories()).memories == []

    asyncio.run(run())


def test_wrong_arguments_name_the_parameter() -> None:
    """Refused before anything is sent (no server here), naming the parameter."""
    c = em.EngramClient("http://127.0.0.1:9", "")
    refuses("query", lambda: c.search(["x"]))  # type: ignore[arg-type]
    refuses("prompt", lambda: c.inject(5))  # type: ignore[arg-type]
    refuses("messages", lambda: c.add_episode("e", "hello"))  # type: ignore[arg-type]
    refuses("messages[1]", lambda: c.add_episode("e", [{"text": "a"}, "b"]))  # type: ignore[list-item]
    refuses("scope", lambda: c.delete_scope(5))  # type: ignore[arg-type]
    refuses("scope", lambda: c.list_memories(scope=5))  # type: ignore[typeddict-item]
    refuses("scope", lambda: c.list_memories(scope={"user": 5}))  # type: ignore[dict-item]
    refuses("within", lambda: c.get("x", within=["user=u1"]))  # type: ignore[arg-type]
    refuses("id", lambda: c.touch(None))  # type: ignore[arg-type]
    c.close()
