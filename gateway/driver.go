package gateway

import (
	"context"
	"io"
	"iter"
)

// Driver is the narrow interface a backend implements: only its raw
// operations and one classifier. NewBucket turns a Driver into a Store;
// the Bucket owns everything the backends share (see Bucket), so a driver
// never validates keys, checks conditions or contexts, applies a prefix,
// wraps errors or guards against use after Close.
//
// Every key and prefix a driver sees is valid (ValidateKey, ValidatePrefix),
// already carries the store's prefix, and passes the driver's NameChecker
// when it has one; every condition is valid for its operation (CheckPutCond,
// CheckDeleteCond); the context was live when the call began. Methods must
// be safe for concurrent use.
//
// A driver returns its own errors (an SDK error, a syscall error, a
// sentinel of its own); the Bucket wraps each once as an *Error naming the
// caller's key, of the kind Kind gives it. A driver that already knows the
// kind (ErrUnknownOutcome from Refused.Settle, say) may return an *Error
// itself; its kind is kept.
type Driver interface {
	// Get must return the whole object and its version, or an error Kind
	// classifies as ErrNotFound when the key is absent.
	Get(ctx context.Context, key string) ([]byte, Version, error)
	// Stat must return the attributes of key (Key may be left empty), or
	// an error Kind classifies as ErrNotFound.
	Stat(ctx context.Context, key string) (Attrs, error)
	// GetStream must open the object for reading, with its attributes.
	GetStream(ctx context.Context, key string) (io.ReadCloser, Attrs, error)
	// List must yield every key that starts with prefix, in byte order,
	// with its full (prefixed) name; an error ends the sequence.
	List(ctx context.Context, prefix string) iter.Seq2[Attrs, error]
	// Put must store data atomically under c: IfAbsent must fail with an
	// error Kind classifies as ErrExists when the key is present, even
	// under a race; IfMatch with one classified ErrPrecondition when the
	// version differs or the key is absent.
	Put(ctx context.Context, key string, data []byte, c Cond) (Version, error)
	// PutStream is Put for data read from r; it must never make a partial
	// object visible, and must fail (creating nothing) when r fails.
	PutStream(ctx context.Context, key string, r io.Reader, c Cond) (Version, error)
	// Delete must remove key under c (None or IfMatch): an absent key is
	// ErrNotFound, a stale version ErrPrecondition.
	Delete(ctx context.Context, key string, c Cond) error
	// Kind must classify an error of the methods above, for a request
	// that carried c, as one of the store kinds (ErrNotFound, ErrExists,
	// ErrPrecondition, ErrPermission, ErrUnavailable, ErrUnsupported,
	// ErrInvalidKey). A cloud driver checks its own error codes and then
	// StatusKind.
	Kind(err error, c Cond) error
}

// NameChecker is implemented by a driver whose store refuses some names
// the contract allows (a length limit counted with the prefix, characters
// the service forbids). CheckName gets the full, prefixed name; an error
// refuses the key as ErrInvalidKey, saying why.
type NameChecker interface {
	CheckName(name string) error
}
