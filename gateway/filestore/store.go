package filestore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/ckgate/ckgate/gateway"
)

// Store is a gateway.Store on a local directory. It is safe for concurrent
// use by goroutines, and by processes that share the directory.
type Store struct {
	dir string // absolute root directory

	mu     sync.Mutex
	root   *os.Root // opened on first use
	owner  owner    // whom new paths go to, learnt with root
	closed bool
}

var (
	_ gateway.Store       = (*Store)(nil)
	_ gateway.BucketMaker = (*Store)(nil)
	_ gateway.Closer      = (*Store)(nil)
)

// New returns a store rooted at the existing directory root. A missing
// directory is an error of kind gateway.ErrNotFound naming the path.
func New(root string) (*Store, error) {
	s, err := newStore(root)
	if err != nil {
		return nil, err
	}
	if _, err := s.openRoot("open", s.dir); err != nil {
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
	return &Store{dir: abs}, nil
}

// Root returns the absolute root directory.
func (s *Store) Root() string { return s.dir }

// MakeBucket creates the root directory (and its parents). It succeeds when
// the directory already exists. Run as root, it gives the directories it
// creates to the owner of the nearest existing parent (see # Owners).
func (s *Store) MakeBucket(ctx context.Context) error {
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
func (s *Store) Close() error {
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
func (s *Store) openRoot(op, key string) (*os.Root, error) {
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

// begin validates key and ctx and returns the root for one request.
func (s *Store) begin(ctx context.Context, op, key string) (*os.Root, error) {
	if err := validKey(op, key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, gateway.E(op, key, gateway.ErrUnavailable, err)
	}
	return s.openRoot(op, key)
}

// ownerFor returns whom new paths go to (see owner); call it after begin.
func (s *Store) ownerFor() owner {
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
