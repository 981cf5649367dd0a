package gateway

import (
	"hash"
	"io"
)

// CountingReader reads from R, counts the bytes read in N and, when Hash is
// set, writes them to Hash as well: the size and digest of a stream handed
// to PutStream, known once it has been read.
type CountingReader struct {
	R    io.Reader
	Hash hash.Hash // optional
	N    int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	if c.Hash != nil {
		c.Hash.Write(p[:n])
	}
	return n, err
}
