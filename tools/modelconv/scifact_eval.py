"""Dense retrieval on SciFact (test split) for choosing the static model's PCA
dimension: nDCG@10 and R@100 of model2vec static models distilled at several
dimensions and, with -teacher, of all-MiniLM-L6-v2 itself. Documents are
title + " " + text, as tools/gloveeval embeds them. Reads the data in place,
keeps nothing.

    python tools/modelconv/scifact_eval.py -data ../shared/data -dims 64,128,256,384 [-teacher]
"""

import argparse
import gzip
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def load(data):
    d = os.path.join(data, "scifact")
    ids, docs = [], []
    with gzip.open(os.path.join(d, "corpus.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            ids.append(j["_id"])
            docs.append(j["title"] + " " + j["text"])
    queries = {}
    with gzip.open(os.path.join(d, "queries.test.tsv.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            qid, text = line.rstrip("\n").split("\t", 1)
            queries[qid] = text
    qrels = {}
    with open(os.path.join(d, "qrels.test.txt")) as f:
        for line in f:
            qid, _, did, rel = line.split()
            if int(rel) > 0:
                qrels.setdefault(qid, set()).add(did)
    qids = [q for q in queries if q in qrels]
    return ids, docs, qids, [queries[q] for q in qids], qrels


def score(doc_ids, dvec, qids, qvec, qrels):
    sims = qvec @ dvec.T
    ndcg, r100 = 0.0, 0.0
    for i, q in enumerate(qids):
        order = np.argsort(-sims[i], kind="stable")[:100]
        rel = qrels[q]
        dcg = sum(1 / math.log2(r + 2) for r, j in enumerate(order[:10]) if doc_ids[j] in rel)
        idcg = sum(1 / math.log2(r + 2) for r in range(min(len(rel), 10)))
        ndcg += dcg / idcg
        r100 += sum(1 for j in order if doc_ids[j] in rel) / len(rel)
    return ndcg / len(qids), r100 / len(qids)


def unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / (np.linalg.norm(v, axis=1, keepdims=True) + 1e-12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-data", default="../shared/data")
    ap.add_argument("-dims", default="64,128,256,384")
    ap.add_argument("-sif", default="1e-4", help="comma-separated SIF coefficients; 'none' for no weighting")
    ap.add_argument("-teacher", action="store_true", help="also score all-MiniLM-L6-v2 (slow)")
    args = ap.parse_args()
    doc_ids, docs, qids, queries, qrels = load(args.data)
    print(f"SciFact test: {len(docs)} documents, {len(qids)} queries")
    print("| model | dims | SIF | nDCG@10 | R@100 |")
    print("|---|---|---|---|---|")
    from static_convert import distill

    for sif in args.sif.split(","):
        sif_v = None if sif == "none" else float(sif)
        for dims in [int(x) for x in args.dims.split(",")]:
            m = distill(dims, sif_v)
            nd, r = score(doc_ids, unit(m.encode(docs)), qids, unit(m.encode(queries)), qrels)
            print(f"| static (model2vec distill) | {m.dim} | {sif} | {nd:.4f} | {r:.4f} |", flush=True)
    if args.teacher:
        from bert_convert import st_model

        m = st_model()
        t0 = time.time()
        dv = m.encode(docs, batch_size=32, normalize_embeddings=True)
        qv = m.encode(queries, batch_size=32, normalize_embeddings=True)
        nd, r = score(doc_ids, dv, qids, qv, qrels)
        print(f"| all-MiniLM-L6-v2 (sentence-transformers) | 384 | - | {nd:.4f} | {r:.4f} |  ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
