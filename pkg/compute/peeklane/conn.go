package peeklane

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"

	"google.golang.org/protobuf/proto"
)

// ErrClosed is returned for a message sent on a closed lane.
var ErrClosed = errors.New("peek lane closed")

// conn is one framed connection: Send queues a message for the writer
// goroutine, which writes everything queued in one call; the reader
// goroutine hands each frame to the receiver in order.
type conn struct {
	nc net.Conn
	r  *bufio.Reader // the reader goroutine's, once run starts

	mu     sync.Mutex
	queue  []proto.Message
	closed bool
	err    error
	wake   chan struct{} // capacity 1
	done   chan struct{} // closed once the connection ended
	once   sync.Once
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, r: bufio.NewReaderSize(nc, 32<<10), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues m; false once the connection ended.
func (c *conn) send(m proto.Message) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// close ends the connection with err (nil: closed by this side); the
// first cause wins.
func (c *conn) close(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.err = err
		c.queue = nil
		c.mu.Unlock()
		c.nc.Close()
		close(c.done)
	})
}

// cause is why the connection ended; nil while it runs or when closed by
// this side.
func (c *conn) cause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// run writes queued messages and reads frames into newMsg()'s messages,
// handing each to recv, until either side fails or ctx ends. It closes the
// connection before returning.
func (c *conn) run(ctx context.Context, newMsg func() proto.Message, recv func(proto.Message)) {
	stop := context.AfterFunc(ctx, func() { c.close(ctx.Err()) })
	defer stop()
	go c.writeLoop()
	var buf []byte
	for {
		m := newMsg()
		var err error
		if buf, err = readFrame(c.r, buf, m); err != nil {
			c.close(err)
			return
		}
		recv(m)
	}
}

func (c *conn) writeLoop() {
	var buf []byte
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		if len(q) == 0 {
			continue
		}
		buf = buf[:0]
		for _, m := range q {
			var err error
			if buf, err = appendFrame(buf, m); err != nil {
				c.close(err)
				return
			}
		}
		// One write for every message queued meanwhile: concurrent peeks
		// share the system call and, over TLS, the records.
		if _, err := c.nc.Write(buf); err != nil {
			c.close(err)
			return
		}
		if cap(buf) > 1<<20 {
			buf = nil
		}
	}
}
