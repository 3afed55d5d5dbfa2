"""Time other engines on the data `engram bench` times Engram on.

`engram bench --sizes N --dir DIR --keep` leaves DIR/bench-N.db (the synthetic
memories, each with its vector) and DIR/queries-N.jsonl (the timed queries,
each with its vector). This script loads the same memories into

  * sqlite-vec + FTS5: one SQLite file, a vec0 table (exact cosine KNN) and an
    FTS5 table (porter stemming, BM25), hybrid by reciprocal rank fusion
    (k 60) of each leg's best 50, in Python: the usual "SQLite with vectors"
    pipeline;
  * LanceDB: one table with its native full-text index, vector search
    without an index (exact) and with an IVF_HNSW_SQ index (approximate), and
    its own hybrid query (RRF reranker);

and times each query of each mode (bm25, vector, hybrid) in-process, with the
query's vector given (Engram's own timing embeds the query as well). It prints
p50/p95 in milliseconds, and with --json writes them.

    python -m venv /tmp/peers && /tmp/peers/bin/pip install -r tools/peers/requirements.txt
    engram bench --sizes 100k --queries 300 --dir /tmp/peer --keep
    /tmp/peers/bin/python tools/peers/peers.py --dir /tmp/peer --size 100000
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import struct
import sys
import time


def load(dirname, size):
    """The memories (rowid order) and the queries of one kept bench store."""
    db = sqlite3.connect(os.path.join(dirname, f"bench-{size}.db"))
    rows = db.execute("SELECT text, embedding FROM memories ORDER BY rowid").fetchall()
    db.close()
    texts, vectors = [], []
    for text, blob in rows:
        texts.append(text)
        vectors.append(blob)
    with open(os.path.join(dirname, f"queries-{size}.jsonl")) as f:
        queries = [json.loads(line) for line in f if line.strip()]
    return texts, vectors, queries


def percentiles(samples):
    s = sorted(samples)
    return {
        "p50": statistics.median(s),
        "p95": s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))],
    }


def timed(queries, fn):
    out = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t) * 1000)
    return percentiles(out)


WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text):
    """FTS5 MATCH syntax for a free-text query: its words, quoted, OR-ed."""
    words = WORD.findall(text)
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words) or '""'


def rrf(*rankings, k=60, limit=10):
    score = {}
    for ranking in rankings:
        for i, doc in enumerate(ranking):
            score[doc] = score.get(doc, 0.0) + 1.0 / (k + i + 1)
    return sorted(score, key=lambda d: -score[d])[:limit]


def sqlite_vec_engine(work, texts, vectors, dim, limit, pool):
    import apsw
    import sqlite_vec

    path = os.path.join(work, "sqlite-vec.db")
    if os.path.exists(path):
        os.remove(path)
    conn = apsw.Connection(path)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(text, tokenize='porter unicode61')")
    conn.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{dim}] distance_metric=cosine)")
    t = time.perf_counter()
    with conn:
        conn.executemany("INSERT INTO fts(rowid, text) VALUES (?, ?)", ((i + 1, s) for i, s in enumerate(texts)))
        conn.executemany("INSERT INTO vec(rowid, embedding) VALUES (?, ?)", ((i + 1, v) for i, v in enumerate(vectors)))
    ingest = time.perf_counter() - t

    def bm25(q, k=limit):
        return [r[0] for r in conn.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?", (fts_query(q["query"]), k))]

    def vector(q, k=limit):
        return [r[0] for r in conn.execute(
            "SELECT rowid FROM vec WHERE embedding MATCH ? AND k = ?", (q["blob"], k))]

    def hybrid(q):
        return rrf(bm25(q, pool), vector(q, pool), limit=limit)

    return {"ingest_s": ingest, "modes": {"bm25": bm25, "vector": vector, "hybrid": hybrid}, "close": conn.close}


def lancedb_engine(work, texts, vectors, dim, limit, pool, index=None):
    import lancedb
    import pyarrow as pa

    path = os.path.join(work, "lancedb" + ("-" + index.lower() if index else ""))
    shutil.rmtree(path, ignore_errors=True)
    db = lancedb.connect(path)
    flat = pa.array(struct.unpack(f"<{dim * len(vectors)}f", b"".join(vectors)), pa.float32())
    table = pa.table({
        "id": pa.array(range(1, len(texts) + 1), pa.int64()),
        "text": pa.array(texts, pa.string()),
        "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
    })
    t = time.perf_counter()
    tbl = db.create_table("memories", data=table)
    tbl.create_fts_index("text")
    if index:
        tbl.create_index(metric="cosine", index_type=index)
    ingest = time.perf_counter() - t

    def bm25(q):
        return tbl.search(q["query"], query_type="fts").limit(limit).select(["id"]).to_arrow()

    def vector(q):
        return tbl.search(q["vector"]).distance_type("cosine").limit(limit).select(["id"]).to_arrow()

    def hybrid(q):
        return (tbl.search(query_type="hybrid").vector(q["vector"]).text(q["query"])
                .limit(limit).select(["id"]).to_arrow())

    return {"ingest_s": ingest, "modes": {"bm25": bm25, "vector": vector, "hybrid": hybrid}, "close": lambda: None}


ENGINES = {
    "sqlite-vec+fts5": sqlite_vec_engine,
    "lancedb": lancedb_engine,
    # The same with an approximate vector index, as LanceDB advises for
    # tables of this size (its defaults: partitions from the row count).
    "lancedb-ivf-hnsw-sq": lambda *a: lancedb_engine(*a, index="IVF_HNSW_SQ"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="the --dir of `engram bench --keep`")
    ap.add_argument("--size", type=int, required=True, help="the store size N (bench-N.db)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: " + ", ".join(ENGINES))
    ap.add_argument("--limit", type=int, default=10, help="results per search (engram bench's --limit)")
    ap.add_argument("--pool", type=int, default=50, help="candidates per leg before fusion (sqlite-vec+fts5)")
    ap.add_argument("--json", help="also write the report to this file")
    args = ap.parse_args()
    names = args.engines.split(",")
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        ap.error(f"--engines: unknown {', '.join(unknown)}; want some of {', '.join(ENGINES)}")
    texts, vectors, queries = load(args.dir, args.size)
    dim = len(queries[0]["vector"])
    if any(len(v) != 4 * dim for v in vectors):
        sys.exit(f"peers: bench-{args.size}.db holds vectors that are not {dim}-d float32")
    for q in queries:
        q["blob"] = struct.pack(f"<{dim}f", *q["vector"])
    report = {"size": args.size, "dim": dim, "queries": len(queries), "limit": args.limit, "engines": {}}
    for name in names:
        eng = ENGINES[name](args.dir, texts, vectors, dim, args.limit, args.pool)
        row = {"ingest_s": eng["ingest_s"]}
        for mode, fn in eng["modes"].items():
            for q in queries[:5]:  # warm caches and lazy structures
                fn(q)
            row[mode] = timed(queries, fn)
        eng["close"]()
        report["engines"][name] = row
        print(f"{name:16s} ingest {row['ingest_s']:7.1f} s  " + "  ".join(
            f"{m} p50 {row[m]['p50']:7.2f} ms p95 {row[m]['p95']:7.2f}" for m in ("bm25", "vector", "hybrid")), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
