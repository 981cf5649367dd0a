package filestore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/ckgate/ckgate/gateway"
)

// Store is a gateway.Store on a local directory: the portable
// gateway.Bucket over the file system driver. It is safe for concurrent use
// by goroutines, and by processes that share the directory.
type Store struct {
	*gateway.Bucket
	d *driver
}

// driver holds the root; gateway.Bucket does the key, condition and context
// checks and the closed guard.
type driver struct {
	dir string // absolute root directory

	mu     sync.Mutex
	root   *os.Root // opened on first use
	owner  owner    // whom new paths go to, learnt with root
	closed bool
}

// Store is a gateway.Store (and, through its Bucket, a BucketMaker and a
// Closer) over driver.
var (
	_ gateway.Store  = (*Store)(nil)
	_ gateway.Driver = (*driver)(nil)
)

// New returns a store rooted at the existing directory root. A missing
// directory is an error of kind gateway.ErrNotFound naming the path.
func New(root string) (*Store, error) {
	s, err := newStore(root)
	if err != nil {
		return nil, err
	}
	if _, err := s.d.openRoot("open", s.d.dir); err != nil {
		return nil, err
	}
	return s, nil
}

// Open opens the store named by a file:// URL whose path is the root
// directory. The directory need not exist yet: MakeBucket creates it, and
// until then requests fail with gateway.ErrNotFound. Plain paths reach Open
// through gateway.ParseURL, which turns them into file:// URLs.
func Open(_ context.Context, u *url.URL) (gateway.Store, error) {
	if u.Scheme != "file" {
		return nil, fmt.Errorf("%w: filestore: URL scheme %q, want file", gateway.ErrInvalidURL, u.Scheme)
	}
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("%w: filestore: URL %q: remote host %q (only local paths are served)", gateway.ErrInvalidURL, gateway.Redact(u.String()), u.Host)
	}
	if u.Opaque != "" || u.Path == "" {
		return nil, fmt.Errorf("%w: filestore: URL %q has no absolute path", gateway.ErrInvalidURL, gateway.Redact(u.String()))
	}
	return newStore(filepath.FromSlash(u.Path))
}

func newStore(root string) (*Store, error) {
	if root == "" {
		return nil, fmt.Errorf("filestore: empty root directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("filestore: root %q: %w", root, err)
	}
	d := &driver{dir: abs}
	return &Store{Bucket: gateway.NewBucket(d, ""), d: d}, nil
}

// Root returns the absolute root directory.
func (s *Store) Root() string { return s.d.dir }

// NonRegular yields, in byte order, the names under prefix that List skips
// because they are not regular files (see gateway.ListNonRegular).
func (s *Store) NonRegular(ctx context.Context, prefix string) iter.Seq2[gateway.NonRegularEntry, error] {
	return s.d.NonRegular(ctx, prefix)
}

// Kind classifies a file system error (see # Errors).
func (s *driver) Kind(err error, _ gateway.Cond) error { return kindOf(err) }

// CheckName refuses the names of the store's own temp and lock files.
func (s *driver) CheckName(name string) error {
	if reserved(name) {
		return errReserved
	}
	return nil
}

// MakeBucket creates the root directory (and its parents). It succeeds when
// the directory already exists. Run as root, it gives the directories it
// creates to the owner of the nearest existing parent (see # Owners).
func (s *driver) MakeBucket(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return gateway.E("make-bucket", s.dir, gateway.ErrUnavailable, err)
	}
	missing, parent := missingDirs(s.dir)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return gateway.E("make-bucket", s.dir, kindOf(err), err)
	}
	if fi, err := os.Stat(parent); err == nil {
		if own := ownerOf(fi); own.set {
			for _, d := range missing {
				_ = os.Lchown(d, own.uid, own.gid) // best effort, as owner.dir
			}
		}
	}
	_, err := s.openRoot("make-bucket", s.dir)
	return err
}

// Close releases the root directory. Requests after Close fail with
// gateway.ErrUnavailable.
func (s *driver) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.root == nil {
		return nil
	}
	err := s.root.Close()
	s.root = nil
	return err
}

// openRoot returns the root, opening it on first use; errors are reported
// for op on key.
func (s *driver) openRoot(op, key string) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, gateway.E(op, key, gateway.ErrUnavailable, fmt.Errorf("filestore %s: %w", s.dir, os.ErrClosed))
	}
	if s.root != nil {
		return s.root, nil
	}
	fi, err := os.Stat(s.dir)
	if err == nil && !fi.IsDir() {
		err = &os.PathError{Op: "open", Path: s.dir, Err: errors.New("not a directory")}
		return nil, gateway.E(op, key, gateway.ErrNotFound, fmt.Errorf("store root: %w", err))
	}
	if err == nil {
		s.root, err = os.OpenRoot(s.dir)
	}
	if err == nil {
		s.owner = ownerOf(fi)
	}
	if err != nil {
		return nil, gateway.E(op, key, kindOf(err), fmt.Errorf("store root: %w", err))
	}
	learnEscapeError(s.root)
	return s.root, nil
}

// begin returns the root for one request (gateway.Bucket checked the key
// and ctx).
func (s *driver) begin(_ context.Context, op, key string) (*os.Root, error) {
	return s.openRoot(op, key)
}

// ownerFor returns whom new paths go to (see owner); call it after begin.
func (s *driver) ownerFor() owner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner
}

// missingDirs returns the directories of dir, itself included, that do
// not exist yet (outermost first), and the nearest one that does.
func missingDirs(dir string) (missing []string, parent string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			slices.Reverse(missing)
			return missing, d
		}
		missing = append(missing, d)
	}
}
