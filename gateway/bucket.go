package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bucket is the portable Store over a Driver (gocloud.dev/blob's split).
// It owns what every backend shares: key and prefix validation
// (ValidateKey, ValidatePrefix, the driver's NameChecker), condition checks
// (CheckPutCond, CheckDeleteCond), the context check, the key prefix,
// wrapping each error once as an *Error naming the caller's key, the
// closed guard and the metrics hook: an Observer (WithObserver, installed
// by Metrics.Wrap) sees each call once, with its Op, duration and wrapped
// error. Faults, policy and logging stay decorators (Faults.Wrap,
// WithAuthorizer, Intercept) over any Store.
type Bucket struct {
	d      Driver
	prefix string // "" or ends with '/'
	state  *bucketState
	obs    Observer // nil: none
}

// Observer is a Bucket's hook, called once per call of the Bucket with its
// Op (as Intercept names it: GetStream and GetRange are OpGet, ListPage is
// OpList, PutStream and Copy are OpPut), how long it took and its error as
// returned to the caller. MakeBucket and Close are not observed.
type Observer func(op Op, d time.Duration, err error)

// bucketState is shared by a Bucket and the prefixed views of it.
type bucketState struct {
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var (
	_ Store       = (*Bucket)(nil)
	_ Closer      = (*Bucket)(nil)
	_ BucketMaker = (*Bucket)(nil)
)

// ErrClosed is the cause of every error of a Bucket used after Close (of
// kind ErrUnavailable).
var ErrClosed = errors.New("store is closed")

// NewBucket returns the Store over d, keeping every key under prefix (a
// relative key prefix such as "team/query-1"; "" for none; leading and
// trailing '/' are ignored).
func NewBucket(d Driver, prefix string) *Bucket {
	return &Bucket{d: d, prefix: cleanPrefix(prefix), state: &bucketState{}}
}

func cleanPrefix(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return p + "/"
}

// Driver returns the driver under b.
func (b *Bucket) Driver() Driver { return b.d }

// Prefix returns the key prefix b applies ("" or ending in '/').
func (b *Bucket) Prefix() string { return b.prefix }

// WithPrefix returns a view of b that keeps every key under prefix, below
// b's own prefix; it shares b's driver, its Close and its Observer.
func (b *Bucket) WithPrefix(prefix string) *Bucket {
	p := cleanPrefix(prefix)
	if p == "" {
		return b
	}
	return &Bucket{d: b.d, prefix: b.prefix + p, state: b.state, obs: b.obs}
}

// WithObserver returns a view of b, sharing its driver, prefix and Close,
// whose every call is reported to o, after b's own Observer if it has one.
func (b *Bucket) WithObserver(o Observer) *Bucket {
	if prev := b.obs; prev != nil {
		next := o
		o = func(op Op, d time.Duration, err error) {
			prev(op, d, err)
			next(op, d, err)
		}
	}
	return &Bucket{d: b.d, prefix: b.prefix, state: b.state, obs: o}
}

// unobserved returns b without its Observer, for the calls a fallback makes
// on b's behalf (one observed call is one call, whatever it takes).
func (b *Bucket) unobserved() *Bucket {
	return &Bucket{d: b.d, prefix: b.prefix, state: b.state}
}

// observe reports the call of op begun at start, ending with *err, to b's
// Observer (deferred by every observed method).
func (b *Bucket) observe(op Op, start time.Time, err *error) {
	if b.obs != nil {
		b.obs(op, time.Since(start), *err)
	}
}

// name validates key for op and returns the driver's name for it.
func (b *Bucket) name(ctx context.Context, op, key string) (string, error) {
	if err := ValidateKey(op, key); err != nil {
		return "", err
	}
	return b.full(ctx, op, key)
}

// full returns prefix+key after the checks every call shares.
func (b *Bucket) full(ctx context.Context, op, key string) (string, error) {
	n := b.prefix + key
	if nc, ok := b.d.(NameChecker); ok && key != "" {
		if err := nc.CheckName(n); err != nil {
			return "", E(op, key, ErrInvalidKey, err)
		}
	}
	if b.state.closed.Load() {
		return "", E(op, key, ErrUnavailable, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return "", E(op, key, ErrUnavailable, err)
	}
	return n, nil
}

// fail wraps a driver's error once for op on the caller's key.
func (b *Bucket) fail(op, key string, c Cond, err error) error {
	if err == nil {
		return nil
	}
	if ge, ok := err.(*Error); ok {
		if ge.Key == key {
			return ge
		}
		return &Error{Op: ge.Op, Key: key, Kind: ge.Kind, Err: ge.Err}
	}
	if k := KindOf(err); k != nil {
		return E(op, key, k, err)
	}
	return E(op, key, b.d.Kind(err, c), err)
}

func (b *Bucket) Get(ctx context.Context, key string) (_ []byte, _ Version, err error) {
	defer b.observe(OpGet, time.Now(), &err)
	n, err := b.name(ctx, "get", key)
	if err != nil {
		return nil, "", err
	}
	data, v, err := b.d.Get(ctx, n)
	if err != nil {
		return nil, "", b.fail("get", key, None(), err)
	}
	return data, v, nil
}

func (b *Bucket) Stat(ctx context.Context, key string) (_ Attrs, err error) {
	defer b.observe(OpStat, time.Now(), &err)
	n, err := b.name(ctx, "stat", key)
	if err != nil {
		return Attrs{}, err
	}
	a, err := b.d.Stat(ctx, n)
	if err != nil {
		return Attrs{}, b.fail("stat", key, None(), err)
	}
	a.Key = key
	return a, nil
}

func (b *Bucket) GetStream(ctx context.Context, key string) (_ io.ReadCloser, _ Attrs, err error) {
	defer b.observe(OpGet, time.Now(), &err)
	n, err := b.name(ctx, "get", key)
	if err != nil {
		return nil, Attrs{}, err
	}
	rc, a, err := b.d.GetStream(ctx, n)
	if err != nil {
		return nil, Attrs{}, b.fail("get", key, None(), err)
	}
	a.Key = key
	return &bucketReader{rc: rc, b: b, key: key}, a, nil
}

// bucketReader wraps the read errors of a driver's stream.
type bucketReader struct {
	rc  io.ReadCloser
	b   *Bucket
	key string
}

func (r *bucketReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if err != nil && err != io.EOF {
		err = r.b.fail("get", r.key, None(), err)
	}
	return n, err
}

func (r *bucketReader) Close() error { return r.rc.Close() }

func (b *Bucket) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		start := time.Now()
		err := b.list(ctx, prefix, yield)
		b.observe(OpList, start, &err)
		if err != nil {
			yield(Attrs{}, err)
		}
	}
}

// list yields the entries under prefix and returns the error that ends
// the listing (nil when it is done or yield stopped it).
func (b *Bucket) list(ctx context.Context, prefix string, yield func(Attrs, error) bool) error {
	if err := ValidatePrefix(prefix); err != nil {
		return err
	}
	full, err := b.full(ctx, "list", prefix)
	if err != nil {
		return err
	}
	for a, err := range b.d.List(ctx, full) {
		if err != nil {
			return b.fail("list", prefix, None(), err)
		}
		if !strings.HasPrefix(a.Key, full) {
			return E("list", prefix, ErrUnavailable,
				fmt.Errorf("the store listed %q, outside the prefix", a.Key))
		}
		a.Key = a.Key[len(b.prefix):]
		if !yield(a, nil) {
			return nil
		}
	}
	return nil
}

func (b *Bucket) Put(ctx context.Context, key string, data []byte, c Cond) (Version, error) {
	return b.put(ctx, key, c, func(n string) (Version, error) { return b.d.Put(ctx, n, data, c) })
}

func (b *Bucket) PutStream(ctx context.Context, key string, r io.Reader, c Cond) (Version, error) {
	return b.put(ctx, key, c, func(n string) (Version, error) { return b.d.PutStream(ctx, n, r, c) })
}

// put is Put and PutStream: the checks, then write, the driver's Put or
// PutStream of the driver's name for key.
func (b *Bucket) put(ctx context.Context, key string, c Cond, write func(name string) (Version, error)) (_ Version, err error) {
	defer b.observe(OpPut, time.Now(), &err)
	n, err := b.name(ctx, "put", key)
	if err != nil {
		return "", err
	}
	if err := CheckPutCond(key, c); err != nil {
		return "", err
	}
	v, err := write(n)
	if err != nil {
		return "", b.fail("put", key, c, err)
	}
	return v, nil
}

func (b *Bucket) Delete(ctx context.Context, key string, c Cond) (err error) {
	defer b.observe(OpDelete, time.Now(), &err)
	n, err := b.name(ctx, "delete", key)
	if err != nil {
		return err
	}
	if err := CheckDeleteCond(key, c); err != nil {
		return err
	}
	return b.fail("delete", key, c, b.d.Delete(ctx, n, c))
}

// MakeBucket creates the bucket when the driver can (it implements
// BucketMaker), and is ErrUnsupported otherwise.
func (b *Bucket) MakeBucket(ctx context.Context) error {
	m, ok := b.d.(BucketMaker)
	if !ok {
		return fmt.Errorf("make bucket: %w: this backend cannot create buckets", ErrUnsupported)
	}
	return m.MakeBucket(ctx)
}

// Close closes the driver once when it holds resources (it is a Closer);
// every later call of b, or of a view of it (WithPrefix), then fails with
// ErrUnavailable (ErrClosed). A driver without resources (memstore's) is
// never closed: Close does nothing, as for any Store that is no Closer.
func (b *Bucket) Close() error {
	c, ok := b.d.(Closer)
	if !ok {
		return nil
	}
	b.state.closeOnce.Do(func() {
		b.state.closed.Store(true)
		b.state.closeErr = c.Close()
	})
	return b.state.closeErr
}
