package gateway

import (
	"context"
	"io"
	"iter"
	"time"
)

// Version identifies one stored state of a key: an ETag on S3 and Azure, a
// generation on GCS, an inode/ctime stamp on the local disk. It is opaque;
// the empty Version means "none".
type Version string

// Attrs describes a stored object.
type Attrs struct {
	Key      string
	Size     int64
	Version  Version
	Modified time.Time
}

// Store is the contract every backend implements. Keys are relative,
// '/'-separated (see ValidateKey). All methods must be safe for concurrent use.
type Store interface {
	// Get must return the whole object and its version, or an error of kind
	// ErrNotFound when the key is absent.
	Get(ctx context.Context, key string) ([]byte, Version, error)
	// Stat must return the attributes of the key, or ErrNotFound.
	Stat(ctx context.Context, key string) (Attrs, error)
	// List must yield every key that starts with prefix, in lexical (byte)
	// order, paging internally; an error ends the sequence.
	List(ctx context.Context, prefix string) iter.Seq2[Attrs, error]
	// Put must store data atomically under key subject to c and return the
	// new version: IfAbsent fails with ErrExists when the key is present,
	// IfMatch fails with ErrPrecondition when the current version differs
	// (or the key is absent).
	Put(ctx context.Context, key string, data []byte, c Cond) (Version, error)
	// PutStream is Put for large objects read from r. A backend that cannot
	// stream must return ErrUnsupported, never buffer silently beyond memory.
	PutStream(ctx context.Context, key string, r io.Reader, c Cond) (Version, error)
	// GetStream opens the object for reading; the caller closes it.
	GetStream(ctx context.Context, key string) (io.ReadCloser, Attrs, error)
	// Delete must remove key subject to c (None or IfMatch); it must return
	// ErrNotFound when the key is absent and ErrPrecondition on a stale version.
	Delete(ctx context.Context, key string, c Cond) error
}

// Closer is implemented by stores that hold resources (clients, files).
type Closer interface {
	Close() error
}

// Close closes s if it holds resources.
func Close(s Store) error {
	if c, ok := s.(Closer); ok {
		return c.Close()
	}
	return nil
}
