package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/embed"
	"github.com/engram-memory/engram/embed/bert"
	"github.com/engram-memory/engram/embed/builtin"
	_ "github.com/engram-memory/engram/embed/builtin/minilm"       // ENGRAM_EMBEDDER=minilm, and stores embedded with it
	_ "github.com/engram-memory/engram/embed/builtin/multilingual" // ENGRAM_EMBEDDER=multilingual
	"github.com/engram-memory/engram/llm"
	"github.com/engram-memory/engram/rerank"
)

// optionsFromEnv reads the providers' configuration (DESIGN §7):
//
//	ENGRAM_EMBEDDER      builtin (default) | minilm | static | glove | bge-small | multilingual | openai | ollama | none
//	ENGRAM_BERT_PRECISION fp32 (default) | bf16 | int8: the built-in transformers' products
//	ENGRAM_EMBED_URL     base URL (openai: …/v1; ollama: default http://127.0.0.1:11434)
//	ENGRAM_EMBED_MODEL   model name (required for openai and ollama)
//	ENGRAM_EMBED_API_KEY bearer key (openai)
//	ENGRAM_EMBED_TIMEOUT per-query embedding timeout (Go duration, default 3s)
//	ENGRAM_VECTOR_WEIGHT the vector leg's fusion weight (default: the store's, else the model's)
//	ENGRAM_RERANK_URL, ENGRAM_RERANK_MODEL, ENGRAM_RERANK_API_KEY: a /rerank endpoint
//	ENGRAM_RERANK=llm    rerank with the LLM below instead
//	ENGRAM_LLM_URL, ENGRAM_LLM_MODEL, ENGRAM_LLM_API_KEY: an OpenAI-compatible chat endpoint (HyDE)
func optionsFromEnv() (engram.Options, error) {
	var o engram.Options
	url, model, key := os.Getenv("ENGRAM_EMBED_URL"), os.Getenv("ENGRAM_EMBED_MODEL"), os.Getenv("ENGRAM_EMBED_API_KEY")
	switch embed.PrecisionFromEnv() {
	case "", string(bert.FP32), string(bert.BF16), string(bert.Int8):
	default:
		return o, usagef("%s=%q: want fp32, bf16 or int8", embed.PrecisionEnv, os.Getenv(embed.PrecisionEnv))
	}
	switch name := os.Getenv("ENGRAM_EMBEDDER"); name {
	case "", "builtin":
	case builtin.MiniLM, builtin.Static, builtin.GloVe, builtin.BGESmall, builtin.Multilingual:
		e, err := builtin.New(name)
		if err != nil {
			return o, err
		}
		o.Embedder = e
	case "none":
		o.NoEmbedder = true
	case "openai":
		if url == "" || model == "" {
			return o, usagef("ENGRAM_EMBEDDER=openai needs ENGRAM_EMBED_URL and ENGRAM_EMBED_MODEL")
		}
		e, err := embed.NewOpenAI(embed.OpenAIConfig{BaseURL: url, Model: model, APIKey: key})
		if err != nil {
			return o, usagef("ENGRAM_EMBED_*: %v", err)
		}
		o.Embedder, o.CacheEmbeddings = e, true
	case "ollama":
		if url == "" {
			url = "http://127.0.0.1:11434"
		}
		if model == "" {
			return o, usagef("ENGRAM_EMBEDDER=ollama needs ENGRAM_EMBED_MODEL")
		}
		e, err := embed.NewOllama(embed.OllamaConfig{BaseURL: url, Model: model})
		if err != nil {
			return o, usagef("ENGRAM_EMBED_*: %v", err)
		}
		o.Embedder, o.CacheEmbeddings = e, true
	default:
		return o, usagef("ENGRAM_EMBEDDER=%q: want builtin, %s, openai, ollama or none", name, strings.Join(builtin.Names(), ", "))
	}
	if v := os.Getenv("ENGRAM_EMBED_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return o, usagef("ENGRAM_EMBED_TIMEOUT=%q: want a positive duration such as 2s", v)
		}
		o.EmbedTimeout = d
	}
	if v := os.Getenv("ENGRAM_VECTOR_WEIGHT"); v != "" {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || !(w >= 0 && w <= engram.MaxFusionWeight) {
			return o, usagef("ENGRAM_VECTOR_WEIGHT=%q: want a number from 0 to %g", v, float64(engram.MaxFusionWeight))
		}
		o.VectorWeight = &w
	}
	if u := os.Getenv("ENGRAM_LLM_URL"); u != "" {
		c, err := llm.New(llm.Config{BaseURL: u, Model: os.Getenv("ENGRAM_LLM_MODEL"), APIKey: os.Getenv("ENGRAM_LLM_API_KEY")})
		if err != nil {
			return o, usagef("ENGRAM_LLM_*: %v", err)
		}
		o.LLM = c
	}
	switch {
	case os.Getenv("ENGRAM_RERANK") == "llm":
		if o.LLM == nil {
			return o, usagef("ENGRAM_RERANK=llm needs ENGRAM_LLM_URL and ENGRAM_LLM_MODEL")
		}
		o.Reranker = rerank.NewLLM(o.LLM)
	case os.Getenv("ENGRAM_RERANK_URL") != "":
		if os.Getenv("ENGRAM_RERANK_MODEL") == "" {
			return o, usagef("ENGRAM_RERANK_URL needs ENGRAM_RERANK_MODEL (the model the /rerank endpoint serves)")
		}
		r, err := rerank.NewHTTP(rerank.HTTPConfig{BaseURL: os.Getenv("ENGRAM_RERANK_URL"),
			Model: os.Getenv("ENGRAM_RERANK_MODEL"), APIKey: os.Getenv("ENGRAM_RERANK_API_KEY")})
		if err != nil {
			return o, usagef("ENGRAM_RERANK_*: %v", err)
		}
		o.Reranker = r
	}
	return o, nil
}

// describeEmbedder names the embedder for messages.
func describeEmbedder(db *engram.DB) string {
	if e := db.Embedder(); e != nil {
		return e.Model()
	}
	return "none"
}
