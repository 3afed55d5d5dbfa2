"""Convert all-MiniLM-L6-v2 from its installed PyPI package into one Engram
tensor file for embed/bert (see README.md).

    python tools/modelconv/bert_convert.py -out embed/bert/minilm-l6-v2.etf
    python tools/modelconv/bert_convert.py -measure [-extra FILE]

-measure writes nothing: it prints, for every weight encoding, the file size
and the min/mean cosine between sentence-transformers' vectors with the
original float32 weights and with the encoded-then-decoded weights.

The file stores the matrices the encoder multiplies by as float16 panels
(layout "panels16", see panels()): the order the Go kernel reads them in, so
a process uses them in place from the binary with nothing to convert. -rows
writes them as [out, in] rows instead (embed/bert reads both; an -encoding
whose matrices are not float16 needs -rows).
"""

import argparse
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etf  # noqa: E402

NAME = "all-minilm-l6-v2"
# REVISION changes whenever the file's weights or settings change, so that
# stored vectors of another revision are never compared with new ones.
REVISION = 1
DEFAULT_ENCODING = "q8emb-f16"

# Weight encodings: how 2-D matrices are stored (vectors are always float32).
ENCODINGS = {
    "f32": lambda name: etf.DT_F32,
    "f16": lambda name: etf.DT_F16,
    "q8": lambda name: etf.DT_Q8,
    # int8 for the word-embedding table (only the rows a text uses are read),
    # float16 for every matrix the encoder multiplies by.
    "q8emb-f16": lambda name: etf.DT_Q8 if name == "embeddings.word_embeddings.weight" else etf.DT_F16,
    "q8emb-f32": lambda name: etf.DT_Q8 if name == "embeddings.word_embeddings.weight" else etf.DT_F32,
    # int8 word table, the encoder's matrices in Q8_0 blocks of 32 (layout
    # "q8panels"), the position and token-type tables float16.
    "q8emb-q8b": lambda name: etf.DT_Q8
    if name == "embeddings.word_embeddings.weight"
    else etf.DT_Q80
    if name.startswith("encoder.layer.") and name.endswith(".weight")
    else etf.DT_F16,
}

# LAYOUTS: how build stores the matrices the encoder multiplies by, and the
# weight dtype each needs. "panels16": float16 panels (panels()); "q8panels":
# Q8_0 panels (etf.q8_panels), bytes embed/bert multiplies by in place.
LAYOUTS = {"panels16": etf.DT_F16, "q8panels": etf.DT_Q80}


def load_source():
    from safetensors.numpy import load_file

    d, prov = etf.minilm_source()
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(d, "sentence_bert_config.json")) as f:
        st_cfg = json.load(f)
    with open(os.path.join(d, "1_Pooling", "config.json")) as f:
        pool = json.load(f)
    with open(os.path.join(d, "tokenizer.json")) as f:
        tok = json.load(f)
    with open(os.path.join(d, "modules.json")) as f:
        modules = json.load(f)
    with open(os.path.join(d, "vocab.txt"), encoding="utf-8") as f:
        vocab = f.read().split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    weights = load_file(os.path.join(d, "model.safetensors"))

    # Check every assumption embed/bert makes, so a different model fails here
    # (check_tokenizer and bert_meta check the rest).
    mode = {k: v for k, v in pool.items() if k.startswith("pooling_mode")}
    if [k for k, v in mode.items() if v] != ["pooling_mode_mean_tokens"]:
        raise SystemExit(f"pooling {pool}, want mean only")
    if [m["type"] for m in modules][-1] != "sentence_transformers.models.Normalize":
        raise SystemExit("model does not end in Normalize")
    if check_tokenizer(tok) != vocab:
        raise SystemExit("vocab.txt differs from tokenizer.json's vocabulary")
    meta = bert_meta(NAME, REVISION, cfg, tok, st_cfg["max_seq_length"], "mean", prov)
    return meta, vocab, weights


def check_tokenizer(tok):
    """Check that a tokenizer.json is what embed/bert's tokenizer does (the
    uncased BERT normaliser and pre-tokenizer, WordPiece with ##, [CLS] A
    [SEP], plain special tokens) and return its vocabulary in id order."""
    norm = tok["normalizer"]
    if norm != {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,
        "lowercase": True,
    }:
        raise SystemExit(f"unsupported normalizer {norm}")
    if tok["pre_tokenizer"] != {"type": "BertPreTokenizer"}:
        raise SystemExit(f"unsupported pre-tokenizer {tok['pre_tokenizer']}")
    model = tok["model"]
    if model["type"] != "WordPiece" or model["continuing_subword_prefix"] != "##":
        raise SystemExit("unsupported tokenizer model")
    vocab = sorted(model["vocab"], key=model["vocab"].get)
    if [model["vocab"][t] for t in vocab] != list(range(len(vocab))):
        raise SystemExit("tokenizer.json ids are not 0..n-1")
    for t in tok["added_tokens"]:
        if t["normalized"] or t["lstrip"] or t["rstrip"] or t["single_word"] or not t["special"]:
            raise SystemExit(f"unsupported added token {t}")
        if vocab[t["id"]] != t["content"]:
            raise SystemExit(f"added token {t} is not vocab entry {t['id']}")
    post = tok["post_processor"]
    single = [s.get("SpecialToken", {}).get("id") or "A" for s in post["single"]]
    if single != ["[CLS]", "A", "[SEP]"]:
        raise SystemExit(f"post-processor {single}")
    return vocab


def bert_meta(name, revision, cfg, tok, max_length, pooling, source):
    """The header embed/bert reads: cfg is a Hugging Face BertConfig as a dict
    (hidden_act gelu, absolute positions), tok the checked tokenizer.json."""
    want = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
    for k, v in want.items():
        if cfg.get(k) != v:
            raise SystemExit(f"config {k} = {cfg.get(k)!r}, want {v!r}")
    if pooling not in ("mean", "cls"):
        raise SystemExit(f"pooling {pooling!r}")
    model = tok["model"]
    return {
        "kind": "bert",
        "name": name,
        "revision": revision,
        "bert": {
            "hidden_size": cfg["hidden_size"],
            "num_layers": cfg["num_hidden_layers"],
            "num_heads": cfg["num_attention_heads"],
            "intermediate_size": cfg["intermediate_size"],
            "max_position": cfg["max_position_embeddings"],
            "type_vocab_size": cfg["type_vocab_size"],
            "layer_norm_eps": cfg["layer_norm_eps"],
            "hidden_act": "gelu_erf",
        },
        "tokenizer": {
            "type": "wordpiece",
            "normalizer": "bert_uncased",  # clean text, CJK split, NFD accent strip, lowercase
            "unk": model["unk_token"],
            "prefix": "[CLS]",
            "suffix": "[SEP]",
            "special": [t["content"] for t in tok["added_tokens"]],
            "max_chars_per_word": model["max_input_chars_per_word"],
            "max_length": max_length,
        },
        "pooling": pooling,
        "normalize": True,
        "source": source,
    }


# PANEL is the panel width of the float16 layout embed/bert multiplies by in
# place (internal/linalg's F16Panel, the kernel's 16 columns).
PANEL = 16
LINEAR = ("attention.output.dense.weight", "intermediate.dense.weight", "output.dense.weight")


def panels(a):
    """[n, k] -> [ceil(n/16), k, 16]: panel jp holds, per k step p, rows
    jp*16 .. jp*16+15 of a at [jp, p, :], rows past n zero. The layout the
    Go kernel reads front to back, so a process uses the weights in place."""
    n, k = a.shape
    np_ = -(-n // PANEL)
    p = np.zeros((np_ * PANEL, k), dtype=np.float32)
    p[:n] = a
    return p.reshape(np_, PANEL, k).transpose(0, 2, 1)


def tensors(weights, encoding, layout):
    """(name, array, dtype) in name order. With a layout every matrix the
    encoder multiplies by is in that layout's panels ("panels16": float16
    values; "q8panels": Q8_0 bytes), and a layer's query, key and value
    weights are stacked into one attention.self.qkv.weight."""
    pick = ENCODINGS[encoding]
    out = {}
    for name in sorted(weights):
        if name == "embeddings.position_ids":
            continue
        a = weights[name]
        out[name] = (a, pick(name) if a.ndim == 2 else etf.DT_F32)
    if layout:
        pack = (lambda a: (panels(a), etf.DT_F16)) if layout == "panels16" else (lambda a: (etf.q8_panels(a), etf.DT_BYTES))
        for name in [n for n in out if n.startswith("encoder.layer.")]:
            pre, rest = re.match(r"(encoder\.layer\.\d+\.)(.*)", name).groups()
            if rest == "attention.self.query.weight":
                qkv = [out.pop(pre + f"attention.self.{x}.weight")[0] for x in ("query", "key", "value")]
                out[pre + "attention.self.qkv.weight"] = pack(np.concatenate(qkv, axis=0))
            elif rest in LINEAR:
                out[name] = pack(out[name][0])
    return [(n, a, dt) for n, (a, dt) in sorted(out.items())]


def build(meta, vocab, weights, encoding, layout=None):
    meta = dict(meta, encoding=encoding)
    if layout:
        if ENCODINGS[encoding]("encoder.layer.0.output.dense.weight") != LAYOUTS[layout]:
            raise SystemExit(f"layout {layout} does not take the matrices of encoding {encoding}")
        meta["linear_layout"] = layout
    w = etf.Writer(meta)
    w.add_bytes("vocab", "\n".join(vocab).encode("utf-8"))
    for name, a, dt in tensors(weights, encoding, layout):
        if dt == etf.DT_BYTES:
            w.add_bytes(name, a)
        else:
            w.add(name, a, dt)
    return w.encode()


def layout_for(encoding):
    """The panel layout that takes encoding's matrices."""
    dt = ENCODINGS[encoding]("encoder.layer.0.output.dense.weight")
    for layout, want in LAYOUTS.items():
        if dt == want:
            return layout
    raise SystemExit(f"encoding {encoding} has no panel layout: use -rows")


def write(path, meta, vocab, weights, encoding=DEFAULT_ENCODING, layout="panels16"):
    """Write a BERT model file: the one writer of every converter of a BERT
    (bge_convert.py too), so that a change of layout here changes every file
    the same way when they are regenerated. weights are PyTorch-named float32
    arrays in BertModel's state-dict layout (Linear weights [out x in]);
    layout None writes them as rows (-rows)."""
    if layout is None and ENCODINGS[encoding]("encoder.layer.0.output.dense.weight") == etf.DT_Q80:
        raise SystemExit(f"encoding {encoding} is written only in the q8panels layout, not as rows")
    data = build(meta, vocab, weights, encoding, layout)
    with open(path, "wb") as f:
        f.write(data)
    print(f"{path}: {len(data):,} bytes, sha256 {__import__('hashlib').sha256(data).hexdigest()}")
    return data


def st_model():
    os.environ["HF_HUB_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    d, _ = etf.minilm_source()
    return SentenceTransformer(d, device="cpu")


def measure(meta, vocab, weights, extra):
    import torch
    from texts import TEXTS

    texts = list(TEXTS)
    if extra:
        with open(extra, encoding="utf-8") as f:
            texts += [line.rstrip("\n") for line in f if line.strip()]
    m = st_model()
    ref = m.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
    bert = m[0].auto_model
    orig = {k: v.clone() for k, v in bert.state_dict().items()}
    print(f"{len(texts)} texts")
    print("| encoding | file bytes | min cosine | mean cosine |")
    print("|---|---|---|---|")
    for enc in ENCODINGS:
        data = build(meta, vocab, weights, enc)
        _, tensors = etf.read(data)
        sd = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in tensors.items() if k != "vocab"}
        missing = [k for k in orig if k not in sd and k != "embeddings.position_ids"]
        sd.update({k: orig[k] for k in missing})  # the pooler, which mean pooling never uses
        bert.load_state_dict({**orig, **sd})
        got = m.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
        cos = (got * ref).sum(1)
        print(f"| {enc} | {len(data):,} | {cos.min():.6f} | {cos.mean():.6f} |")
    bert.load_state_dict(orig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-out", help="output .etf file")
    ap.add_argument("-encoding", default=DEFAULT_ENCODING, choices=sorted(ENCODINGS))
    ap.add_argument("-measure", action="store_true", help="print the encoding table instead of writing")
    ap.add_argument("-rows", action="store_true", help="store matrices as [out, in] rows, not float16 panels")
    ap.add_argument("-extra", help="with -measure: a file of more texts, one a line (not kept)")
    args = ap.parse_args()
    meta, vocab, weights = load_source()
    if args.measure:
        measure(meta, vocab, weights, args.extra)
        return
    if not args.out:
        ap.error("-out is required")
    write(args.out, meta, vocab, weights, args.encoding, None if args.rows else layout_for(args.encoding))


if __name__ == "__main__":
    main()
