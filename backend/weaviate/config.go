package weaviate

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/memory"
)

// Defaults of a Config's zero fields.
const (
	DefaultClass       = "Memory"
	DefaultTimeout     = 10 * time.Second
	DefaultRetries     = 3
	DefaultConsistency = "QUORUM"
	DefaultAPIKeyEnv   = "ENGRAM_WEAVIATE_API_KEY"
	// DefaultBatchSize is the objects sent per batch request, as Weaviate's
	// own clients default to.
	DefaultBatchSize = 100
)

// Tokenizers: how the BM25 leg's text is split into terms.
const (
	// TokenizerEngram stores the terms Engram's own tokenizer makes (NFKC,
	// folding, identifiers whole and in parts, CJK bigrams, Snowball stems,
	// stopwords dropped) in one whitespace-tokenized property, and tokenizes
	// the query the same way: both backends match the same terms and score
	// them alike (TestBM25AgainstEngram).
	TokenizerEngram = "engram"
	// TokenizerWord is Weaviate's own "word" tokenization over the raw text
	// (split on anything not a letter or digit, lower-cased, no stemming) with
	// its English stopword list.
	TokenizerWord = "word"
)

// Vector index types (Weaviate's vectorIndexType).
const (
	IndexHNSW = "hnsw" // approximate; exact below flatSearchCutoff filtered matches
	IndexFlat = "flat" // brute force: exact, as Engram's own vector leg
)

// Vector quantizers (Weaviate's names for DEFAULT_QUANTIZATION).
const (
	QuantizerNone = "none" // whole float32 vectors, whatever the server's default
	QuantizerBQ   = "bq"   // one bit a dimension
	QuantizerRQ8  = "rq-8" // rotational quantisation, 8 bits a dimension
	QuantizerRQ1  = "rq-1" // rotational quantisation, 1 bit a dimension
)

// ErrConfig wraps every rejection of a URL or Config.
var ErrConfig = errors.New("weaviate config")

// Config says where the store lives and how to talk to it. ParseURL builds one
// from a weaviate:// URL; the zero values of the optional fields take the
// defaults above.
type Config struct {
	// Endpoint is the REST base, "http://host:port" (or https).
	Endpoint string
	// Class is the collection holding the memories (DefaultClass).
	Class string
	// TenantKey is the scope key whose values become Weaviate tenants, one
	// tenant per value (created on first write); every other scope key is a
	// filter. Empty: one shard, every scope key a filter.
	TenantKey string
	// Consistency is the replication consistency level of every read and
	// write: ONE, QUORUM or ALL (DefaultConsistency).
	Consistency string
	// APIKey is sent as a bearer token; it is read from the environment
	// variable APIKeyEnv by ParseURL and never appears in errors or String.
	APIKey    string
	APIKeyEnv string
	// GRPCPort is the server's gRPC port (DefaultGRPCPort), on the
	// Endpoint's host: searches and batch writes go there, schema and admin
	// requests to the REST Endpoint.
	GRPCPort int
	// Timeout bounds each request attempt (DefaultTimeout); Retries is how
	// many attempts may follow a failed one (DefaultRetries; negative: none).
	Timeout time.Duration
	Retries int
	// Tokenizer is TokenizerEngram (default) or TokenizerWord. It is fixed
	// when the class is created.
	Tokenizer string
	// K1 and B are the class's BM25 parameters (default 1.2 and 0.75, as
	// Engram's). Fixed when the class is created.
	K1, B float64
	// VectorIndex is IndexHNSW (default) or IndexFlat, for vectors of models
	// first seen from now on.
	VectorIndex string
	// EfConstruction and MaxConnections are the HNSW graph's build
	// parameters, for vectors of models first seen from now on: 0 leaves
	// Weaviate's (128 and 32). Lower builds faster and finds less
	// (docs/weaviate.md, "Ingest").
	EfConstruction, MaxConnections int
	// Quantizer is how the HNSW index compresses the vectors it searches
	// and builds its graph with: QuantizerBQ, QuantizerRQ8 or QuantizerRQ1
	// (Weaviate rescores the best candidates with the whole vectors), or
	// QuantizerNone; "" leaves the server's DEFAULT_QUANTIZATION. For
	// vectors of models first seen from now on (docs/weaviate.md, "Ingest").
	Quantizer string
	// Replicas is the class's replication factor (default 1). Fixed when the
	// class is created.
	Replicas int
	// Shards is how many shards a class without a tenant key is split into
	// (default 1; Weaviate's own default is one per node). Weaviate keeps
	// BM25 statistics per shard, so more than one changes keyword scores
	// (docs/weaviate.md, "A cluster"). A tenant is always one shard. Fixed
	// when the class is created.
	Shards int
	// BatchSize is the objects per batch request (DefaultBatchSize).
	BatchSize int
}

// Compiled on first use, not at every engram process's start.
var (
	classRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][_0-9A-Za-z]{0,254}$`) })
	envRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// ParseURL reads a store URL:
//
//	weaviate://HOST:PORT?class=Memory&tenant=team&consistency=QUORUM&grpc=50051
//
// Parameters, all optional:
//
//	class        collection name, [A-Z][_0-9A-Za-z]* (default Memory)
//	tenant       scope key mapped to Weaviate tenants (default none: no multi-tenancy)
//	consistency  ONE, QUORUM or ALL (default QUORUM)
//	api_key_env  environment variable holding the API key (default ENGRAM_WEAVIATE_API_KEY;
//	             unset or empty: no key is sent)
//	grpc         the server's gRPC port, for searches and batch writes (default 50051)
//	tls          true: talk https (default false)
//	timeout      per-attempt timeout, a Go duration (default 10s)
//	retries      attempts after a failed one, 0..10 (default 3)
//	tokenizer    engram or word (default engram; fixed when the class is created)
//	k1, b        BM25 parameters (default 1.2, 0.75; fixed when the class is created)
//	index        hnsw or flat (default hnsw)
//	ef_construction, max_connections
//	             the HNSW graph's build parameters, 8..1024 and 4..128 (default: Weaviate's,
//	             128 and 32), for vectors of models first seen from now on
//	quantizer    none, bq, rq-8 or rq-1: how the HNSW index compresses vectors (default: the
//	             server's DEFAULT_QUANTIZATION), for vectors of models first seen from now on
//	replicas     replication factor, 1..64 (default 1; fixed when the class is created)
//	shards       shards of a class without tenants, 1..64 (default 1; fixed when the class is created)
//	batch        objects per batch request, 1..1000 (default 100)
//
// An API key is never taken from the URL itself: URLs end up in logs and
// shell history.
func ParseURL(raw string) (Config, error) {
	bad := func(format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return bad("URL: %v", err)
	}
	if u.Scheme != "weaviate" {
		return bad("URL %q: scheme must be weaviate://", u.Redacted())
	}
	if u.User != nil {
		return bad("URL %q: must not carry credentials (set the key in the environment variable named by api_key_env)", u.Redacted())
	}
	if u.Host == "" {
		return bad("URL %q: no host", u.Redacted())
	}
	if u.Path != "" && u.Path != "/" {
		return bad("URL %q: unexpected path %q", u.Redacted(), u.Path)
	}
	if u.Fragment != "" {
		return bad("URL %q: unexpected fragment", u.Redacted())
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return bad("URL %q: host must be HOST:PORT: %v", u.Redacted(), err)
	}
	if _, err := portNumber(port); err != nil {
		return bad("URL %q: port: %v", u.Redacted(), err)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("URL query: %v", err)
	}
	var c Config
	scheme := "http"
	c.APIKeyEnv = DefaultAPIKeyEnv
	for k, vs := range q {
		if len(vs) != 1 {
			return bad("parameter %q given %d times", k, len(vs))
		}
		v := vs[0]
		switch k {
		case "class":
			c.Class = v
		case "tenant":
			c.TenantKey = v
		case "consistency":
			c.Consistency = strings.ToUpper(v)
		case "api_key_env":
			if !envRE().MatchString(v) {
				return bad("api_key_env %q is not an environment variable name", v)
			}
			c.APIKeyEnv = v
		case "grpc":
			p, err := portNumber(v)
			if err != nil {
				return bad("grpc: %v", err)
			}
			c.GRPCPort = p
		case "tls":
			on, err := strconv.ParseBool(v)
			if err != nil {
				return bad("tls %q: want true or false", v)
			}
			if on {
				scheme = "https"
			}
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("timeout %q: want a positive duration such as 10s", v)
			}
			c.Timeout = d
		case "retries":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 10 {
				return bad("retries %q: want 0..10", v)
			}
			c.Retries = n
			if n == 0 {
				c.Retries = -1 // "none", as distinct from the zero value's default
			}
		case "tokenizer":
			c.Tokenizer = v
		case "k1", "b":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return bad("%s %q: want a number", k, v)
			}
			if k == "k1" {
				c.K1 = f
			} else {
				c.B = f
			}
		case "index":
			c.VectorIndex = v
		case "quantizer":
			c.Quantizer = v
		case "ef_construction", "max_connections":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return bad("%s %q: want a positive number", k, v)
			}
			if k == "ef_construction" {
				c.EfConstruction = n
			} else {
				c.MaxConnections = n
			}
		case "replicas":
			n, err := strconv.Atoi(v)
			if err != nil {
				return bad("replicas %q: want 1..64", v)
			}
			c.Replicas = n
		case "shards":
			n, err := strconv.Atoi(v)
			if err != nil {
				return bad("shards %q: want 1..64", v)
			}
			c.Shards = n
		case "batch":
			n, err := strconv.Atoi(v)
			if err != nil {
				return bad("batch %q: want 1..1000", v)
			}
			c.BatchSize = n
		default:
			return bad("unknown parameter %q", k)
		}
	}
	c.Endpoint = scheme + "://" + net.JoinHostPort(host, port)
	c.APIKey = os.Getenv(c.APIKeyEnv)
	if err := c.withDefaults(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func portNumber(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%q is not a port number (1..65535)", s)
	}
	return p, nil
}

// withDefaults fills the zero fields and checks every field.
func (c *Config) withDefaults() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if c.Endpoint == "" {
		return bad("no endpoint")
	}
	if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("endpoint %q: want http(s)://host:port", c.Endpoint)
	}
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	if c.Class == "" {
		c.Class = DefaultClass
	}
	if !classRE().MatchString(c.Class) {
		return bad("class %q: must start with an upper-case letter followed by letters, digits or '_'", c.Class)
	}
	if c.TenantKey != "" {
		if err := memory.ValidateScope(map[string]string{c.TenantKey: "v"}); err != nil {
			return bad("tenant key %q: %v", c.TenantKey, err)
		}
	}
	switch c.Consistency {
	case "":
		c.Consistency = DefaultConsistency
	case "ONE", "QUORUM", "ALL":
	default:
		return bad("consistency %q: want ONE, QUORUM or ALL", c.Consistency)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Timeout < 0 {
		return bad("timeout %s must be positive", c.Timeout)
	}
	switch {
	case c.Retries == 0:
		c.Retries = DefaultRetries
	case c.Retries < 0:
		c.Retries = 0
	case c.Retries > 10:
		return bad("retries %d: want 0..10", c.Retries)
	}
	switch c.Tokenizer {
	case "":
		c.Tokenizer = TokenizerEngram
	case TokenizerEngram, TokenizerWord:
	default:
		return bad("tokenizer %q: want engram or word", c.Tokenizer)
	}
	if c.K1 == 0 {
		c.K1 = 1.2
	}
	if c.B == 0 {
		c.B = 0.75
	}
	if !(c.K1 > 0 && c.K1 <= 1000) || math.IsNaN(c.B) || c.B < 0 || c.B > 1 {
		return bad("BM25 k1 %v, b %v: want 0 < k1 <= 1000 and 0 <= b <= 1", c.K1, c.B)
	}
	switch c.VectorIndex {
	case "":
		c.VectorIndex = IndexHNSW
	case IndexHNSW, IndexFlat:
	default:
		return bad("index %q: want hnsw or flat", c.VectorIndex)
	}
	switch c.Quantizer {
	case "", QuantizerNone, QuantizerBQ, QuantizerRQ8, QuantizerRQ1:
	default:
		return bad("quantizer %q: want none, bq, rq-8 or rq-1", c.Quantizer)
	}
	if c.EfConstruction != 0 && (c.EfConstruction < 8 || c.EfConstruction > 1024) {
		return bad("ef_construction %d: want 8..1024", c.EfConstruction)
	}
	if c.MaxConnections != 0 && (c.MaxConnections < 4 || c.MaxConnections > 128) {
		return bad("max_connections %d: want 4..128", c.MaxConnections)
	}
	if c.Quantizer != "" && c.Quantizer != QuantizerNone && c.VectorIndex != IndexHNSW {
		// Weaviate's flat index rescores only the k best by the compressed
		// vectors: recall@10 0.224 at 100k with bq (docs/weaviate.md).
		return bad("quantizer %s of a flat index: want hnsw, or none", c.Quantizer)
	}
	if (c.EfConstruction != 0 || c.MaxConnections != 0) && c.VectorIndex != IndexHNSW {
		return bad("ef_construction and max_connections are the HNSW graph's; index %q has none", c.VectorIndex)
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Replicas < 1 || c.Replicas > 64 {
		return bad("replicas %d: want 1..64", c.Replicas)
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Shards < 1 || c.Shards > 64 {
		return bad("shards %d: want 1..64", c.Shards)
	}
	if c.Shards > 1 && c.TenantKey != "" {
		return bad("shards %d with tenant key %q: a tenant is always one shard", c.Shards, c.TenantKey)
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.BatchSize < 1 || c.BatchSize > 1000 {
		return bad("batch %d: want 1..1000", c.BatchSize)
	}
	return nil
}

// String describes the config for logs and errors: the API key only as set
// or not.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = " key=[redacted]"
	}
	tenant := c.TenantKey
	if tenant == "" {
		tenant = "-"
	}
	return fmt.Sprintf("weaviate{%s class=%s tenant=%s consistency=%s%s}", c.Endpoint, c.Class, tenant, c.Consistency, key)
}
