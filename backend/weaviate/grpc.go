package weaviate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/engram-memory/engram/internal/httpjson"
)

// DefaultGRPCPort is the gRPC port of a Config that names none: Weaviate's
// own default.
const DefaultGRPCPort = 50051

// rpc is the gRPC side of the client: searches and batch writes go through
// it, one call each, with the same per-attempt timeout, retries and error
// classes as the REST side (which keeps schema and admin requests). The
// connection is made on first use, so that a store whose server has no gRPC
// listener still opens and says why at its first search.
type rpc struct {
	target string // host:port
	tls    bool
	apiKey string
	c      *client // retries, timeout, redaction

	once sync.Once
	conn *grpc.ClientConn
	api  pb.WeaviateClient
	err  error
}

// newRPC is the gRPC side of c, on the endpoint's host (checked by
// Config.withDefaults) and cfg.GRPCPort.
func newRPC(cfg Config, c *client) *rpc {
	u, _ := url.Parse(cfg.Endpoint)
	port := cfg.GRPCPort
	if port == 0 {
		port = DefaultGRPCPort
	}
	return &rpc{target: net.JoinHostPort(u.Hostname(), strconv.Itoa(port)), tls: u.Scheme == "https", apiKey: cfg.APIKey, c: c}
}

// dial makes the connection (lazily: grpc.NewClient does not connect).
func (r *rpc) dial() (pb.WeaviateClient, error) {
	r.once.Do(func() {
		creds := insecure.NewCredentials()
		if r.tls {
			creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
		}
		r.conn, r.err = grpc.NewClient(r.target, grpc.WithTransportCredentials(creds),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBody), grpc.MaxCallSendMsgSize(maxBody)))
		if r.err != nil {
			r.err = fmt.Errorf("weaviate gRPC %s: %w", r.target, r.err)
			return
		}
		r.api = pb.NewWeaviateClient(r.conn)
	})
	return r.api, r.err
}

// search sends one Search (once dial has succeeded) and reads its answer
// into ans straight from the bytes (grpcwire.go).
func (r *rpc) search(ctx context.Context, req *pb.SearchRequest, ans *searchAnswer) error {
	return r.conn.Invoke(ctx, pb.Weaviate_Search_FullMethodName, req, ans, grpc.ForceCodecV2(wireCodec{}))
}

func (r *rpc) close() {
	if r.conn != nil {
		r.conn.Close()
	}
}

// call runs one gRPC exchange (what names it in errors) under the
// per-attempt timeout with the client's retries: Unavailable,
// ResourceExhausted, Aborted and an attempt's timeout are temporary and end
// as ErrUnavailable; a missing tenant is errTenantNotFound; anything else is
// returned at once, the server's message cleaned of the key.
func (r *rpc) call(ctx context.Context, what string, fn func(ctx context.Context, api pb.WeaviateClient) error) error {
	api, err := r.dial()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if r.apiKey != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+r.apiKey)
	}
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, r.c.timeout)
		err := fn(actx, api)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("weaviate gRPC %s: %w (last attempt: %v)", what, ctx.Err(), r.clean(err))
		}
		st, _ := status.FromError(err)
		msg := r.clean(err)
		if strings.Contains(st.Message(), tenantNotFoundText) {
			return errTenantNotFound
		}
		var retry bool
		switch st.Code() {
		case codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
			retry = true
		case codes.DeadlineExceeded:
			retry = true
			if timedOut {
				msg = "no answer within " + r.c.timeout.String()
			}
		}
		if !retry {
			return fmt.Errorf("weaviate gRPC %s %s: %s: %s", what, r.target, st.Code(), msg)
		}
		if n > r.c.retries {
			return fmt.Errorf("%w: gRPC %s %s: gave up after %d attempts: %s", ErrUnavailable, what, r.target, n, msg)
		}
		if !httpjson.Sleep(ctx, backoff(n)) {
			return fmt.Errorf("weaviate gRPC %s: %w (while waiting to retry: %s)", what, ctx.Err(), msg)
		}
	}
}

// clean is an error's server message on one line, the key removed.
func (r *rpc) clean(err error) string {
	if st, ok := status.FromError(err); ok {
		return r.c.clean(st.Message())
	}
	return r.c.clean(err.Error())
}

// consistency is the level sent with every gRPC call.
func consistency(level string) *pb.ConsistencyLevel {
	l := pb.ConsistencyLevel_CONSISTENCY_LEVEL_QUORUM
	switch level {
	case "ONE":
		l = pb.ConsistencyLevel_CONSISTENCY_LEVEL_ONE
	case "ALL":
		l = pb.ConsistencyLevel_CONSISTENCY_LEVEL_ALL
	}
	return &l
}
