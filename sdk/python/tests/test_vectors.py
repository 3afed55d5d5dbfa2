"""The shared test vectors (sdk/testvectors/vectors.json) through the sync
and the async client, each against its own fresh engram serve."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import engram_memory as em
from engram_memory import _errors

from conftest import Server


def plan(case: dict[str, Any]) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """The SDK call a case makes: method name, positional and keyword arguments."""
    op, body, q, id = case["op"], case.get("body"), dict(case.get("query") or {}), case.get("id")
    within = {"within": q["scope"]} if "scope" in q else {}
    if op == "addMemories":
        if "memories" in body:
            return "add_many", (body["memories"],), {}
        fields = {k: v for k, v in body.items() if k != "text"}
        return "add", (body["text"],), fields
    if op == "listMemories":
        return "list_memories", (), q
    if op == "deleteScope":
        if q.get("all") is True and "scope" not in q:
            return "reset", (), {}
        return "delete_scope", (q.get("scope", ""),), {}
    if op == "getMemory":
        return "get", (id,), within
    if op == "updateMemory":
        return "update", (id,), {**within, **body}
    if op == "deleteMemory":
        return "delete", (id,), within
    if op == "favoriteMemory":
        return "favorite", (id, (body or {}).get("favorite", True)), within
    if op == "touchMemory":
        return "touch", (id,), within
    if op == "memoryHistory":
        return "history", (id,), within
    if op == "addEpisode":
        rest = {k: v for k, v in body.items() if k not in ("episode", "messages")}
        return "add_episode", (body["episode"], body["messages"]), rest
    if op == "search":
        rest = {k: v for k, v in body.items() if k != "query"}
        return "search", (body["query"],), rest
    if op == "inject":
        rest = {k: v for k, v in body.items() if k != "prompt"}
        return "inject", (body["prompt"],), rest
    if op == "brief":
        return "brief", (), dict(body or {})
    if op == "import":
        return "import_jsonl", (body,), {"skip_invalid": bool(q.get("skip_invalid", False))}
    if op == "export":
        return "export", (), {}
    if op in ("stats", "healthz", "readyz", "openapi"):
        return op, (), {}
    if op == "mcp":
        return "mcp", (body,), {}
    if op == "raw":
        return "request", (case["method"], case["path"]), {"content": case.get("raw_body"),
                                                           "headers": case.get("headers")}
    raise AssertionError(f"case {case['name']!r}: no SDK call for op {op!r}")


def pick(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj[key]
    return getattr(obj, key)


def ids_of(op: str, res: Any) -> list[str]:
    if op == "listMemories":
        return [m.id for m in res.memories]
    if op in ("search", "inject"):
        return [r.id for r in res.results]
    if op == "brief":
        return [i.id for i in res.items]
    if op == "memoryHistory":
        return [v.id for v in res.versions]
    if op in ("addMemories", "addEpisode", "import"):
        return list(res.ids or [])
    if op == "export":
        return [m.id for m in res]
    return [res.id]


def subset(at: str, want: dict[str, Any], got: Any) -> None:
    for k, w in want.items():
        try:
            g = pick(got, k)
        except (KeyError, AttributeError):
            raise AssertionError(f"field {at}{k} missing from {got!r}") from None
        if isinstance(w, dict):
            subset(f"{at}{k}.", w, g)
        elif isinstance(w, list) and w and isinstance(w[0], dict):
            assert len(g) == len(w), f"field {at}{k}: {g!r}, want {w!r}"
            for i, (wi, gi) in enumerate(zip(w, g)):
                subset(f"{at}{k}[{i}].", wi, gi)
        else:
            assert g == w, f"field {at}{k} is {g!r}, want {w!r}"


def check(case: dict[str, Any], res: Any, err: Exception | None) -> None:
    exp = case["expect"]
    if exp["status"] >= 400:
        assert err is not None, f"got {res!r}, want {exp['status']} {exp.get('code')}"
        assert isinstance(err, em.EngramError), f"raised {err!r}"
        assert err.status == exp["status"] and err.code == exp["code"], f"raised {err!r}"
        assert type(err) is _errors._BY_CODE[exp["code"]], f"raised {type(err).__name__} for {err.code}"
        assert err.message
        return
    if err is not None:
        raise AssertionError(f"raised {err!r}, want {exp['status']}") from err
    op = case["op"]
    if "ids" in exp:
        assert ids_of(op, res) == exp["ids"]
    if "has_next" in exp:
        assert bool(res.next_cursor) == exp["has_next"]
    if "skipped_lines" in exp:
        assert [s.line for s in res.skipped] == exp["skipped_lines"]
    if "tools_include" in exp:
        names = [t["name"] for t in res["result"]["tools"]]
        for n in exp["tools_include"]:
            assert n in names, f"tools {names} lack {n}"
    subset("", exp.get("json") or {}, res)
    if op in ("search", "inject"):
        for r in res.results:  # typed explain, the contract's names
            assert isinstance(r.explain, em.Explain) and isinstance(r.explain.boosts, em.Boosts)
            assert all(isinstance(n, em.Neighbour) for n in r.neighbours)
    if op == "search":
        assert all(isinstance(w, em.TimeWindow) for w in res.time)
    if op == "memoryHistory":
        assert all(isinstance(v, em.Version) for v in res.versions)


def clients(cls: Any, server: Server, vectors: dict[str, Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {None: cls(server.url, api_key="", max_retries=0)}
    for name, k in vectors["keys"].items():
        out[name] = cls(server.url, api_key=k["key"], max_retries=0)
    return out


def test_vectors_sync(server: Server, vectors: dict[str, Any]) -> None:
    cs = clients(em.EngramClient, server, vectors)
    failures = []
    for i, case in enumerate(vectors["cases"]):
        name, args, kw = plan(case)
        res, err = None, None
        try:
            res = getattr(cs[case["as"]], name)(*args, **kw)
            if name == "export":
                res = list(res)
        except em.EngramError as e:
            err = e
        try:
            check(case, res, err)
        except AssertionError as e:
            failures.append(f"case {i} {case['name']!r}: {e}")
    for c in cs.values():
        c.close()
    assert not failures, "\n".join(failures)


def test_vectors_async(server: Server, vectors: dict[str, Any]) -> None:
    async def run() -> list[str]:
        cs = clients(em.AsyncEngramClient, server, vectors)
        failures = []
        for i, case in enumerate(vectors["cases"]):
            name, args, kw = plan(case)
            res, err = None, None
            try:
                if name == "export":
                    res = [m async for m in cs[case["as"]].export()]
                else:
                    res = await getattr(cs[case["as"]], name)(*args, **kw)
            except em.EngramError as e:
                err = e
            try:
                check(case, res, err)
            except AssertionError as e:
                failures.append(f"case {i} {case['name']!r}: {e}")
        for c in cs.values():
            await c.aclose()
        return failures

    failures = asyncio.run(run())
    assert not failures, "\n".join(failures)


def test_every_operation_has_a_call(vectors: dict[str, Any]) -> None:
    """Every operationId of the served document maps to a method of both clients."""
    doc = json.loads((__import__("conftest").REPO / "server/httpapi/openapi.json").read_text())
    ops = {o["operationId"] for p in doc["paths"].values() for m, o in p.items() if isinstance(o, dict) and "operationId" in o}
    samples = {c["op"]: c for c in vectors["cases"]}
    for op in sorted(ops):
        assert op in samples, f"no vector for {op}"
        name, _, _ = plan(samples[op])
        assert callable(getattr(em.EngramClient, name)) and callable(getattr(em.AsyncEngramClient, name)), op
