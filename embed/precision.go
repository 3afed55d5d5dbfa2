package embed

import (
	"os"
	"strings"
)

// PrecisionEnv names the environment variable the built-in transformers
// (embed/bert, embed/e5) read their default precision from: "fp32", "bf16"
// or "int8", whatever the case; each model says what it does with each.
const PrecisionEnv = "ENGRAM_BERT_PRECISION"

// PrecisionFromEnv is $ENGRAM_BERT_PRECISION in lower case ("" if unset).
func PrecisionFromEnv() string { return strings.ToLower(os.Getenv(PrecisionEnv)) }
