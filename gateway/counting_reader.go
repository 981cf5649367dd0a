package gateway

import "io"

// CountingReader counts the bytes read through it: what a PutStream of
// it stored once the put returns (a copier's manifest size, a part's
// size), with no second pass over the stream.
type CountingReader struct {
	R io.Reader
	N int64 // bytes read so far
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
