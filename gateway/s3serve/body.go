package s3serve

import "io"

// readCloser is a GET's body: the object's bytes, limited to the answer's
// length (an *io.LimitedReader), and the store stream that closes them.
type readCloser struct {
	io.Reader
	io.Closer
}

// WriteTo copies the body to w with a buffer the size of the body (up to
// io.Copy's 32 KiB). fasthttp copies a body that is no io.WriterTo with
// its bufio.Writer's ReadFrom, which, once the headers fill and flush its
// buffer, hands the reader to the connection's ReadFrom and so to io.Copy
// of a reader it cannot size: 32 KiB allocated and cleared for every GET,
// 8 times a 4 KiB object. io.Copy sizes its buffer by an *io.LimitedReader
// source, so the body is given as one.
func (r readCloser) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(writerOnly{w}, r.Reader)
}

// writerOnly hides w's ReadFrom, so that io.Copy copies through its own
// buffer instead of handing the reader back to w.
type writerOnly struct{ io.Writer }
