package weaviate

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	t.Setenv(DefaultAPIKeyEnv, "")
	t.Setenv("MY_KEY", "s3cret")
	cases := []struct {
		name string
		url  string
		want Config // checked field by field below; zero fields are the defaults
		err  string
	}{
		{name: "minimal", url: "weaviate://127.0.0.1:8080",
			want: Config{Endpoint: "http://127.0.0.1:8080", Class: "Memory", Consistency: "QUORUM", Timeout: 10 * time.Second, Retries: 3,
				Tokenizer: "engram", VectorIndex: "hnsw", Replicas: 1, Shards: 1, BatchSize: 100}},
		{name: "everything", url: "weaviate://db.internal:443?class=Agents_2&tenant=team&consistency=all&grpc=50051&tls=true&timeout=2s&retries=0&tokenizer=word&k1=1.5&b=0.5&index=flat&replicas=3&shards=1&batch=500&api_key_env=MY_KEY",
			want: Config{Endpoint: "https://db.internal:443", Class: "Agents_2", TenantKey: "team", Consistency: "ALL", GRPCPort: 50051,
				Timeout: 2 * time.Second, Retries: 0, Tokenizer: "word", K1: 1.5, B: 0.5, VectorIndex: "flat", Replicas: 3, Shards: 1, BatchSize: 500,
				APIKey: "s3cret", APIKeyEnv: "MY_KEY"}},
		{name: "IPv6 host", url: "weaviate://[::1]:8080?class=M", want: Config{Endpoint: "http://[::1]:8080", Class: "M"}},
		{name: "wrong scheme", url: "http://127.0.0.1:8080", err: "scheme must be weaviate"},
		{name: "no port", url: "weaviate://127.0.0.1", err: "HOST:PORT"},
		{name: "bad port", url: "weaviate://127.0.0.1:99999", err: "port"},
		{name: "credentials in the URL", url: "weaviate://user:pw@127.0.0.1:8080", err: "must not carry credentials"},
		{name: "lower-case class", url: "weaviate://h:1?class=memory", err: "upper-case"},
		{name: "unknown parameter", url: "weaviate://h:1?colour=red", err: `unknown parameter "colour"`},
		{name: "repeated parameter", url: "weaviate://h:1?class=A&class=B", err: "given 2 times"},
		{name: "bad consistency", url: "weaviate://h:1?consistency=SOME", err: "consistency"},
		{name: "bad timeout", url: "weaviate://h:1?timeout=-1s", err: "timeout"},
		{name: "shards", url: "weaviate://h:1?shards=3&replicas=3", want: Config{Endpoint: "http://h:1", Class: "Memory", Replicas: 3, Shards: 3}},
		{name: "shards above 64", url: "weaviate://h:1?shards=65", err: "shards 65"},
		{name: "HNSW build parameters", url: "weaviate://h:1?ef_construction=64&max_connections=16",
			want: Config{Endpoint: "http://h:1", Class: "Memory", EfConstruction: 64, MaxConnections: 16}},
		{name: "ef_construction out of range", url: "weaviate://h:1?ef_construction=4", err: "ef_construction 4: want 8..1024"},
		{name: "max_connections not a number", url: "weaviate://h:1?max_connections=many", err: `max_connections "many"`},
		{name: "quantizer", url: "weaviate://h:1?quantizer=rq-8", want: Config{Endpoint: "http://h:1", Class: "Memory", Quantizer: "rq-8"}},
		{name: "no quantizer on a flat index", url: "weaviate://h:1?index=flat&quantizer=none", want: Config{Endpoint: "http://h:1", Class: "Memory", VectorIndex: "flat", Quantizer: "none"}},
		{name: "unknown quantizer", url: "weaviate://h:1?quantizer=pq", err: `quantizer "pq": want none, bq, rq-8 or rq-1`},
		{name: "quantizer of a flat index", url: "weaviate://h:1?index=flat&quantizer=bq", err: "quantizer bq of a flat index"},
		{name: "HNSW parameters of a flat index", url: "weaviate://h:1?index=flat&max_connections=16", err: "index \"flat\" has none"},
		{name: "shards of a tenant class", url: "weaviate://h:1?shards=3&tenant=team", err: "a tenant is always one shard"},
		{name: "bad tokenizer", url: "weaviate://h:1?tokenizer=trigram", err: "tokenizer"},
		{name: "b above 1", url: "weaviate://h:1?b=1.5", err: "BM25"},
		{name: "tenant key with '='", url: "weaviate://h:1?tenant=a%3Db", err: "tenant key"},
		{name: "a path", url: "weaviate://h:1/v1", err: "path"},
		{name: "bad env name", url: "weaviate://h:1?api_key_env=1X", err: "environment variable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseURL(c.url)
			if c.err != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want ErrConfig containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			check := func(name string, g, w any, zero bool) {
				if !zero && g != w {
					t.Errorf("%s = %v, want %v", name, g, w)
				}
			}
			check("Endpoint", got.Endpoint, w.Endpoint, false)
			check("Class", got.Class, w.Class, false)
			check("TenantKey", got.TenantKey, w.TenantKey, false)
			check("Consistency", got.Consistency, w.Consistency, w.Consistency == "")
			check("GRPCPort", got.GRPCPort, w.GRPCPort, false)
			check("Timeout", got.Timeout, w.Timeout, w.Timeout == 0)
			check("Retries", got.Retries, w.Retries, w.Timeout == 0)
			check("Tokenizer", got.Tokenizer, w.Tokenizer, w.Tokenizer == "")
			check("K1", got.K1, w.K1, w.K1 == 0)
			check("B", got.B, w.B, w.B == 0)
			check("VectorIndex", got.VectorIndex, w.VectorIndex, w.VectorIndex == "")
			check("Replicas", got.Replicas, w.Replicas, w.Replicas == 0)
			check("Shards", got.Shards, w.Shards, w.Shards == 0)
			check("BatchSize", got.BatchSize, w.BatchSize, w.BatchSize == 0)
			check("EfConstruction", got.EfConstruction, w.EfConstruction, false)
			check("MaxConnections", got.MaxConnections, w.MaxConnections, false)
			check("Quantizer", got.Quantizer, w.Quantizer, false)
			check("APIKey", got.APIKey, w.APIKey, false)
		})
	}
}

// TestConfigStringHidesKey: the key never shows in String.
func TestConfigStringHidesKey(t *testing.T) {
	t.Setenv("K", "s3cret")
	c, err := ParseURL("weaviate://h:1?api_key_env=K")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "[redacted]") {
		t.Fatalf("String() = %q", s)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"weaviate://127.0.0.1:8080?class=Memory&tenant=team", "weaviate://[::1]:1?timeout=1s", "weaviate://h:1?b=NaN", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseURL(s)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
			return
		}
		// An accepted URL gives a config that passes its own checks again.
		if err := c.withDefaults(); err != nil {
			t.Fatalf("accepted %q but its config fails: %v", s, err)
		}
	})
}
