package httpjson

import (
	"fmt"
	"log/slog"
)

// Describe renders a provider's configuration, named name, for %v and %s:
// its URL and model, and only whether an API key is set.
func Describe(name, baseURL, model, apiKey string) string {
	key := ""
	if apiKey != "" {
		key = " key=[redacted]"
	}
	return fmt.Sprintf("%s{url=%s model=%s%s}", name, baseURL, model, key)
}

// LogValue is a provider's configuration for structured logs: its URL and
// model, and only whether an API key is set.
func LogValue(baseURL, model, apiKey string) slog.Value {
	return slog.GroupValue(
		slog.String("url", baseURL),
		slog.String("model", model),
		slog.Bool("api_key_set", apiKey != ""),
	)
}
