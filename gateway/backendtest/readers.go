package backendtest

import (
	"context"
	"io"
)

// The sources a backend's streaming tests put: one that hides its length,
// one that cancels the put midway, one that breaks midway. Each backend's
// tests use these, so "cancelled after n bytes" means the same on all.

// StreamOnly hides everything of r but Read: a store cannot learn the
// length (no Len, Seek or WriterTo) and must stream it.
func StreamOnly(r io.Reader) io.Reader { return streamOnly{r} }

type streamOnly struct{ r io.Reader }

func (s streamOnly) Read(p []byte) (int, error) { return s.r.Read(p) }

// CancelAfter returns a reader of r that hands out exactly n bytes, then
// calls cancel (a put's context) on every later Read and goes on reading:
// the store must notice the cancellation, not an end of input.
func CancelAfter(r io.Reader, n int64, cancel context.CancelFunc) io.Reader {
	return &cancelAfter{r: r, left: n, cancel: cancel}
}

type cancelAfter struct {
	r      io.Reader
	left   int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.cancel()
	} else if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// FailAfter returns a reader of r that hands out at most n bytes, then
// fails every Read with err (a source that breaks midway).
func FailAfter(r io.Reader, n int64, err error) io.Reader {
	return &failAfter{r: r, left: n, err: err}
}

type failAfter struct {
	r    io.Reader
	left int64
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, f.err
	}
	n, err := f.r.Read(p[:min(int64(len(p)), f.left)])
	f.left -= int64(n)
	return n, err
}
