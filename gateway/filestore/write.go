package filestore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// Put stores data under key subject to c (see the package documentation,
// # Durability and atomicity).
func (s *driver) Put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	return s.write(ctx, key, c, int64(len(data)), func(w io.Writer) (int64, error) {
		n, err := w.Write(data)
		return int64(n), err
	})
}

// PutStream stores what r yields under key subject to c. It streams into
// the temp file and never holds the whole object in memory.
func (s *driver) PutStream(ctx context.Context, key string, r io.Reader, c gateway.Cond) (gateway.Version, error) {
	return s.write(ctx, key, c, -1, func(w io.Writer) (int64, error) {
		return io.Copy(w, ctxReader{ctx, r})
	})
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// write writes a temp file with fill (want bytes, or -1 when unknown) and
// publishes it under key subject to c. Every step after the key's
// directory is found works in that directory (d), by single names.
func (s *driver) write(ctx context.Context, key string, c gateway.Cond, want int64, fill func(io.Writer) (int64, error)) (gateway.Version, error) {
	const op = "put"
	root, err := s.begin(ctx, op, key)
	if err != nil {
		return "", err
	}
	p, _ := keyPath(op, key)
	dir, base := splitKey(p)
	own := s.ownerFor()
	d, err := keyDir(root, own, dir)
	if err != nil {
		return "", s.writeErr(root, key, p, err)
	}
	if d != root {
		defer d.Close()
	}
	if err := linkOut(root, d, op, key, p, base); err != nil {
		return "", err
	}
	df, err := d.Open(".") // the directory itself: for O_TMPFILE, linkat and its fsync
	if err != nil {
		return "", s.writeErr(root, key, p, err)
	}
	defer df.Close()
	if c.Kind == gateway.CondIfAbsent {
		fi, ok, err := writeAnon(ctx, df, own, base, want, fill)
		if err != nil {
			return "", s.writeErr(root, key, p, err)
		}
		if ok {
			if err := df.Sync(); err != nil {
				return "", gateway.E(op, key, kindOf(err), fmt.Errorf("published, but syncing its directory: %w", err))
			}
			return version(fi), nil
		}
	}
	tmp, fi, err := writeTemp(ctx, d, own, want, fill)
	if err != nil {
		return "", s.writeErr(root, key, p, err)
	}
	published := false
	defer func() {
		if !published {
			d.Remove(tmp)
		}
	}()

	if c.Kind == gateway.CondIfAbsent {
		if err := ctx.Err(); err != nil {
			return "", gateway.E(op, key, gateway.ErrUnavailable, err)
		}
		if err := d.Link(tmp, base); err != nil {
			return "", s.writeErr(root, key, p, err)
		}
		published = true
		if err := d.Remove(tmp); err != nil {
			return "", gateway.E(op, key, kindOf(err), fmt.Errorf("published, but removing the temp file: %w", err))
		}
	} else {
		unlock, err := s.lock(ctx, root, op, key)
		if err != nil {
			return "", err
		}
		defer unlock()
		if c.Kind == gateway.CondIfMatch {
			if err := checkVersion(root, op, key, c.Version); err != nil {
				return "", err
			}
		}
		if err := ctx.Err(); err != nil {
			return "", gateway.E(op, key, gateway.ErrUnavailable, err)
		}
		if err := d.Rename(tmp, base); err != nil {
			return "", s.writeErr(root, key, p, err)
		}
		published = true
	}
	// One directory fsync makes the new name durable (and, on the create
	// path, the temp's removal: the temp lived in the same directory).
	if err := df.Sync(); err != nil {
		return "", gateway.E(op, key, kindOf(err), fmt.Errorf("published, but syncing its directory: %w", err))
	}
	return version(fi), nil
}

// keyDir opens the directory dir of a key as a root of its own, creating
// it (ensureDir) when missing; "." is root itself. Inside root, like
// every name: a link out of root is refused.
func keyDir(root *os.Root, own owner, dir string) (*os.Root, error) {
	if dir == "." {
		return root, nil
	}
	d, err := root.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = ensureDir(root, own, dir); err == nil {
			d, err = root.OpenRoot(dir)
		}
	}
	if err != nil {
		if fi, serr := root.Stat(dir); serr == nil && !fi.IsDir() {
			// os.Root says "not a directory" without the errno
			err = &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
		}
	}
	return d, err
}

// linkOut refuses a key whose own name (base in its directory d) is a
// symbolic link leading out of the root (ErrInvalidKey, as for a key
// through one): publishing would otherwise replace the link (rename) or
// call it an existing key (link).
func linkOut(root, d *os.Root, op, key, p, base string) error {
	fi, err := d.Lstat(base)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if _, err := root.Stat(p); isEscape(err) || errors.Is(err, syscall.ELOOP) {
		return gateway.E(op, key, gateway.ErrInvalidKey, err)
	}
	return nil
}

// checkVersion fails with ErrPrecondition unless key holds version v.
func checkVersion(root *os.Root, op, key string, v gateway.Version) error {
	fi, err := statObject(root, op, key)
	var ge *gateway.Error
	if errors.Is(err, gateway.ErrNotFound) && errors.As(err, &ge) {
		return gateway.E(op, key, gateway.ErrPrecondition, fmt.Errorf("want version %s, the key is absent: %w", v, ge.Err))
	}
	if err != nil {
		return err
	}
	if cur := version(fi); cur != v {
		return gateway.E(op, key, gateway.ErrPrecondition, fmt.Errorf("current version %s, want %s", cur, v))
	}
	return nil
}

// writeErr classifies an error of a write step: EEXIST from link(2) is
// ErrExists unless the key is a directory, which no write can replace.
func (s *driver) writeErr(root *os.Root, key, p string, err error) error {
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := root.Lstat(p); serr == nil && fi.IsDir() {
			return gateway.E("put", key, gateway.ErrUnsupported, fmt.Errorf("%w: %w", errUnderObject, err))
		}
		return gateway.E("put", key, gateway.ErrExists, err)
	}
	if k := writeKindOf(err); k == gateway.ErrUnsupported {
		return gateway.E("put", key, k, fmt.Errorf("%w: %w", errUnderObject, err))
	}
	return gateway.E("put", key, writeKindOf(err), err)
}

// writeTemp writes a new temp file in the directory d with fill (see
// fillTemp) and closes it. It returns the temp file's name and final info;
// on error the temp file is removed.
func writeTemp(ctx context.Context, d *os.Root, own owner, want int64, fill func(io.Writer) (int64, error)) (_ string, fi fs.FileInfo, err error) {
	name := tempPrefix + rand.Text()
	f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, err
	}
	own.file(f)
	defer func() {
		if err != nil {
			f.Close() // may already be closed
			d.Remove(name)
		}
	}()
	fi, err = fillTemp(ctx, f, want, fill, func(t time.Time) error { return d.Chtimes(name, t, t) })
	if err != nil {
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	return name, fi, ctx.Err()
}

// writeAnon writes an unnamed temp file in the directory dir with fill
// (see fillTemp) and links it as base: a create-only publish. ok is false,
// with nothing written, where unnamed files cannot be made (openAnon).
func writeAnon(ctx context.Context, dir *os.File, own owner, base string, want int64, fill func(io.Writer) (int64, error)) (fi fs.FileInfo, ok bool, err error) {
	f, ok, err := openAnon(dir)
	if !ok || err != nil {
		return nil, ok, err
	}
	defer f.Close()
	own.file(f)
	fi, err = fillTemp(ctx, f, want, fill, func(t time.Time) error { return os.Chtimes(anonPath(f), t, t) })
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = linkAnon(f, dir, base)
	}
	return fi, true, err
}

// fillTemp writes a temp file f with fill, checks its size, stamps its
// modification time with stamp and makes its data durable (datasync). It
// returns f's final info.
func fillTemp(ctx context.Context, f *os.File, want int64, fill func(io.Writer) (int64, error), stamp func(time.Time) error) (fs.FileInfo, error) {
	n, err := fill(f)
	if err != nil {
		return nil, err
	}
	if want >= 0 && n != want {
		return nil, fmt.Errorf("wrote %d of %d bytes: %w", n, want, io.ErrShortWrite)
	}
	// Stamp the version: a fresh nanosecond mtime on a fresh inode.
	if err := stamp(time.Now()); err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() != n {
		return nil, fmt.Errorf("temp file holds %d bytes, wrote %d: %w", fi.Size(), n, io.ErrShortWrite)
	}
	if err := datasync(f); err != nil {
		return nil, err
	}
	return fi, ctx.Err()
}

// ensureDir creates dir and its missing parents, gives each directory it
// creates to own and fsyncs its parent so the new names are durable.
func ensureDir(root *os.Root, own owner, dir string) error {
	if dir == "." {
		return nil
	}
	if fi, err := root.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := "."
	for seg := range strings.SplitSeq(dir, string(filepath.Separator)) {
		p := filepath.Join(parent, seg)
		switch err := root.Mkdir(p, 0o755); {
		case err == nil:
			own.dir(root, p)
			if err := syncDir(root, parent); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
			// there already, or a file: creating below it reports ENOTDIR
		default:
			return err
		}
		parent = p
	}
	return nil
}

// syncDir fsyncs a directory so the names published in it are durable.
func syncDir(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Delete removes key subject to c (None or IfMatch), holding the key's lock.
// The key's directory is left in place.
func (s *driver) Delete(ctx context.Context, key string, c gateway.Cond) error {
	const op = "delete"
	root, err := s.begin(ctx, op, key)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx, root, op, key)
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := statObject(root, op, key)
	if err != nil {
		return err
	}
	if c.Kind == gateway.CondIfMatch {
		if cur := version(fi); cur != c.Version {
			return gateway.E(op, key, gateway.ErrPrecondition, fmt.Errorf("current version %s, want %s", cur, c.Version))
		}
	}
	if err := ctx.Err(); err != nil {
		return gateway.E(op, key, gateway.ErrUnavailable, err)
	}
	p, _ := keyPath(op, key)
	if err := root.Remove(p); err != nil {
		return gateway.E(op, key, kindOf(err), err)
	}
	dir, _ := splitKey(p)
	if err := syncDir(root, dir); err != nil {
		return gateway.E(op, key, kindOf(err), fmt.Errorf("deleted, but syncing its directory: %w", err))
	}
	return nil
}
