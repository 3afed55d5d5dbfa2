"""Write embed/bert's bge-small-en-v1.5 reference file with the original
runtime: onnxruntime over the fp32 ONNX model in LangChain4j's Maven artifact
(see bge_convert.py), one text a run, no padding. Every text of texts.py with
its token ids, as the artifact's tokenizer.json gives them through Hugging
Face tokenizers ([CLS]/[SEP] included, truncated at 512), and its vector: the
[CLS] row of last_hidden_state, L2-normalised (BGE's pooling). The query
instruction's vectors are under "query": the instruction prefixed to the
first texts, as BGE's authors suggest for short retrieval queries.

    python tools/modelconv/bge_reference.py -out embed/bert/testdata/bge-reference.json.gz
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bge_convert  # noqa: E402
import etf  # noqa: E402
from texts import TEXTS  # noqa: E402

# How many texts also get a vector with the query instruction.
QUERY_TEXTS = 40


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-jar", default=bge_convert.default_jar())
    ap.add_argument("-out", required=True)
    args = ap.parse_args()

    onnx_bytes, tok_bytes, prov = bge_convert.read_jar(args.jar)
    tk = bge_convert.tokenizer(tok_bytes)
    sess = bge_convert.ort_session(onnx_bytes)

    def item(t):
        ids = tk.encode(t).ids
        vec = bge_convert.ort_embed(sess, ids)
        if abs(float(np.linalg.norm(vec)) - 1) > 1e-4:
            raise SystemExit(f"vector of {t!r} is not unit length")
        return {"text": t, "ids": ids, "vec": etf.f32_b64(vec)}

    items = [item(t) for t in TEXTS]
    queries = [item(bge_convert.QUERY_INSTRUCTION + t) for t in TEXTS[:QUERY_TEXTS]]
    doc = {
        "generator": "tools/modelconv/bge_reference.py",
        "runtime": etf.versions("onnxruntime", "tokenizers", "numpy"),
        "source": prov,
        "pooling": "cls",
        "max_seq_length": bge_convert.MAX_LENGTH,
        "dim": int(bge_convert.CONFIG["hidden_size"]),
        "query_instruction": bge_convert.QUERY_INSTRUCTION,
        "items": items,
        "queries": queries,
    }
    etf.write_gzip_json(args.out, doc)
    print(f"{args.out}: {len(items)} texts, {len(queries)} queries")


if __name__ == "__main__":
    main()
