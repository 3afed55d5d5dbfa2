package mcpserver

// The stdio transport: newline-delimited JSON-RPC, as the SDK's IOTransport,
// with two differences a host relies on. A line that is not a JSON-RPC
// message is answered with a JSON-RPC error (parse error, or invalid request)
// and the session goes on, instead of ending it with every pending answer
// lost. And when the input ends, the answers to the calls already read are
// written before the session ends, so `printf 'init\ncall\n' | engram mcp`
// prints both.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one JSON-RPC line on stdio; a longer one is answered
// with a parse error and skipped.
const MaxLineBytes = 16 << 20

// DrainTimeout bounds how long, once the input has ended, the server waits
// for the answers to calls it already read.
var DrainTimeout = time.Minute

// lineTransport is the stdio transport over r and w.
type lineTransport struct {
	r io.Reader
	w io.Writer
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{w: t.w, lines: make(chan lineOrErr), closed: make(chan struct{}), pending: map[string]bool{}}
	c.idle = sync.NewCond(&c.mu)
	go c.readLines(t.r)
	return c, nil
}

type lineOrErr struct {
	line []byte
	err  error
}

// lineConn is one stdio session. Read is called by one goroutine (the SDK's
// read loop); Write from many.
type lineConn struct {
	lines  chan lineOrErr
	closed chan struct{}
	once   sync.Once

	wmu sync.Mutex // serialises writes to w
	w   io.Writer

	mu      sync.Mutex // guards pending
	idle    *sync.Cond // signalled when pending shrinks
	pending map[string]bool
}

// readLines feeds the lines of r to Read, so that Close can unblock a Read
// waiting for input.
func (c *lineConn) readLines(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		select {
		case c.lines <- lineOrErr{line, err}:
		case <-c.closed:
			return
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return
		}
	}
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLineBytes)

// readLine reads one line (without its newline), or errLineTooLong after
// skipping the rest of an over-long one.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineBytes {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			return line, nil // a last line without a newline
		}
		return line, err
	}
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// Read returns the next JSON-RPC message, answering every line that is not
// one with an error; at the end of the input it waits (at most DrainTimeout)
// for the answers to the calls it returned, then reports io.EOF.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var le lineOrErr
		select {
		case le = <-c.lines:
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if errors.Is(le.err, errLineTooLong) {
			c.writeError(nil, jsonrpc.CodeParseError, "parse error: "+le.err.Error())
			continue
		}
		if le.err != nil {
			if le.err == io.EOF {
				c.drain(ctx)
			}
			return nil, le.err
		}
		line := trimSpace(le.line)
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			c.writeError(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.writeError(rawID(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending[idKey(req.ID)] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
}

// drain waits until every call read has been answered, the connection is
// closed, ctx ends, or DrainTimeout passes.
func (c *lineConn) drain(ctx context.Context) {
	deadline := time.Now().Add(DrainTimeout)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTimer(DrainTimeout)
		defer t.Stop()
		select {
		case <-stop:
		case <-c.closed:
		case <-ctx.Done():
		case <-t.C:
		}
		c.mu.Lock()
		c.idle.Broadcast()
		c.mu.Unlock()
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && time.Now().Before(deadline) && ctx.Err() == nil && !c.isClosed() {
		c.idle.Wait()
	}
}

func (c *lineConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// Write writes one message as a line.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, idKey(resp.ID))
		c.idle.Broadcast()
		c.mu.Unlock()
	}
	return nil
}

func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// writeError answers a line the server could not take as a message. id is
// the line's id when it had a readable one, else null (as JSON-RPC asks).
func (c *lineConn) writeError(id any, code int64, msg string) {
	data, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   any    `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	_ = c.writeLine(data)
}

// rawID is the "id" of a JSON object line, when it is a valid JSON-RPC id.
func rawID(line []byte) any {
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return nil
	}
	switch probe.ID.(type) {
	case string, float64:
		return probe.ID
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// Close ends the session; a Read waiting for input returns.
func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
