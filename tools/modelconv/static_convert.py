"""Distil a static embedding model from all-MiniLM-L6-v2 by the Model2Vec
method (model2vec's own distill on the local teacher: every vocabulary token
through the encoder, mean-pooled, PCA, Zipf/SIF weights with coefficient 1e-4)
and write it as one Engram tensor file for embed/static, its int8 rows with a
scale each; optionally also embed/static's reference file, with model2vec's
own StaticModel.tokenize and StaticModel.encode on the float32 model.

    python tools/modelconv/static_convert.py -out embed/static/minilm-static256.etf \
        -reference embed/static/testdata/reference.json.gz
"""

import argparse
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etf  # noqa: E402

NAME = "minilm-static"
# REVISION changes whenever the file's vectors or settings change.
REVISION = 1
DEFAULT_DIMS = 256
SIF = 1e-4


def distill(dims, sif=SIF):
    """model2vec's distill on the installed teacher, deterministically (one thread)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    os.environ["HF_HUB_OFFLINE"] = "1"
    from model2vec.distill import distill as m2v_distill

    d, _ = etf.minilm_source()
    m = m2v_distill(d, pca_dims=dims, sif_coefficient=sif, quantize_to="float32", device="cpu")
    if m.weights is not None or m.token_mapping is not None:
        raise SystemExit("distilled model has per-token weights or a token mapping; embed/static reads neither")
    if m.embedding.shape[0] != len(m.tokens):
        raise SystemExit("one vector a token expected")
    return m


def tokenizer_meta(m):
    tok = json.loads(m.tokenizer.to_str())
    if tok["normalizer"] != {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    }:
        raise SystemExit(f"unsupported normalizer {tok['normalizer']}")
    if tok["pre_tokenizer"] != {"type": "BertPreTokenizer"} or tok["post_processor"] is not None:
        raise SystemExit("unsupported pre-tokenizer or post-processor")
    model = tok["model"]
    if model["type"] != "WordPiece" or model["continuing_subword_prefix"] != "##":
        raise SystemExit("unsupported tokenizer model")
    for t in tok["added_tokens"]:
        if t["normalized"] or t["lstrip"] or t["rstrip"] or t["single_word"]:
            raise SystemExit(f"unsupported added token {t}")
    return {
        "type": "wordpiece",
        "normalizer": "bert_uncased",
        "unk": model["unk_token"],
        "prefix": "",
        "suffix": "",
        "special": [t["content"] for t in tok["added_tokens"]],
        "max_chars_per_word": model["max_input_chars_per_word"],
        "max_length": m.max_length,
        "drop_unknown": True,  # StaticModel.tokenize removes the unknown token
    }


def build(m, dims, sif=SIF):
    import importlib.metadata

    _, prov = etf.minilm_source()
    meta = {
        "kind": "static",
        "name": f"{NAME}{m.dim}",
        "revision": REVISION,
        "method": {
            "tool": "model2vec.distill",
            "model2vec": importlib.metadata.version("model2vec"),
            "pca_dims": dims,
            "sif_coefficient": sif,
            "pooling": "mean",
        },
        "dim": int(m.dim),
        "tokenizer": tokenizer_meta(m),
        "normalize": bool(m.normalize),
        "source": prov,
    }
    w = etf.Writer(meta)
    w.add_bytes("vocab", "\n".join(m.tokens).encode("utf-8"))
    w.add("embeddings", m.embedding, etf.DT_Q8)
    return w.encode()


def write_reference(m, path):
    from texts import TEXTS

    _, prov = etf.minilm_source()
    items = []
    for t in TEXTS:
        ids = m.tokenize([t])[0]
        vec = m.encode([t])[0]
        items.append({"text": t, "ids": [int(i) for i in ids], "vec": etf.f32_b64(vec)})
    doc = {
        "generator": "tools/modelconv/static_convert.py",
        "runtime": etf.versions("model2vec", "tokenizers", "torch"),
        "source": prov,
        "max_length": m.max_length,
        "dim": int(m.dim),
        "items": items,
    }
    etf.write_gzip_json(path, doc)


def fidelity(m, data):
    """Cosine between model2vec's vectors and the int8 file's, on the reference texts."""
    from texts import TEXTS

    _, tensors = etf.read(data)
    q = tensors["embeddings"]
    ref = m.encode(TEXTS)
    cos = []
    for t, r in zip(TEXTS, ref):
        ids = m.tokenize([t])[0]
        if not ids:
            continue
        v = q[ids].mean(0)
        cos.append(float(v @ r / (np.linalg.norm(v) * np.linalg.norm(r) + 1e-32)))
    return min(cos), sum(cos) / len(cos)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-out", required=True)
    ap.add_argument("-dims", type=int, default=DEFAULT_DIMS)
    ap.add_argument("-reference", help="also write the reference file here")
    args = ap.parse_args()
    m = distill(args.dims)
    data = build(m, args.dims)
    with open(args.out, "wb") as f:
        f.write(data)
    lo, mean = fidelity(m, data)
    print(f"{args.out}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    print(f"int8 file against model2vec float32: min cosine {lo:.6f}, mean {mean:.6f}")
    if args.reference:
        write_reference(m, args.reference)
        print(f"{args.reference}: {len(__import__('texts').TEXTS)} texts")


if __name__ == "__main__":
    main()
