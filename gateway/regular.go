package gateway

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"strings"
	"syscall"
)

// FileType names what a file of mode m is, with its article: "a FIFO",
// "a character device", "a block device", "a socket", "a directory", "a
// symbolic link", "a regular file", "an irregular file".
func FileType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// NotRegular is the error for a key of a local store that names something
// other than a regular file, so it is never read (opening a FIFO or a device
// for reading may block or never end): a directory is ErrNotFound (it is a
// prefix of other keys, not an object), anything else ErrInvalidKey. The
// message names the key and what it is.
func NotRegular(op, key string, m fs.FileMode) error {
	kind := ErrInvalidKey
	if m.IsDir() {
		kind = ErrNotFound
	}
	return E(op, key, kind, fmt.Errorf("%q is %s, not a regular file", key, FileType(m)))
}

// NonRegularLister is implemented by stores whose namespace can hold names
// that are not objects: the local disk's FIFOs, devices and sockets. List
// skips them (no store could have written them); NonRegular yields them,
// in byte order of their keys, with their modes, so that a copier (archive)
// can refuse a tree that holds one instead of silently leaving it out.
// Decorators (prefix, interceptors) pass it through.
type NonRegularLister interface {
	NonRegular(ctx context.Context, prefix string) iter.Seq2[NonRegularEntry, error]
}

// NonRegularEntry is a name under a store that is not an object.
type NonRegularEntry struct {
	Key  string
	Mode fs.FileMode
}

// Err is the NotRegular error for the entry.
func (e NonRegularEntry) Err(op string) error { return NotRegular(op, e.Key, e.Mode) }

// ListNonRegular yields the non-regular names under prefix of s, or nothing
// when s (an object store) cannot hold any.
func ListNonRegular(ctx context.Context, s Store, prefix string) iter.Seq2[NonRegularEntry, error] {
	if l, ok := s.(NonRegularLister); ok {
		return l.NonRegular(ctx, prefix)
	}
	return func(func(NonRegularEntry, error) bool) {}
}

func (p *prefixStore) NonRegular(ctx context.Context, prefix string) iter.Seq2[NonRegularEntry, error] {
	return func(yield func(NonRegularEntry, error) bool) {
		for e, err := range ListNonRegular(ctx, p.inner, p.prefix+prefix) {
			if err != nil {
				yield(NonRegularEntry{}, p.strip(err))
				return
			}
			e.Key = strings.TrimPrefix(e.Key, p.prefix)
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (s *intercepted) NonRegular(ctx context.Context, prefix string) iter.Seq2[NonRegularEntry, error] {
	return ListNonRegular(ctx, s.inner, prefix)
}

// ReadRegularFile reads the local file at path (a spec, a plan, a policy
// input, a credentials file) whole, at most limit bytes (MaxFileBytes when
// limit <= 0). It opens without blocking and refuses, naming the path,
// anything that is not a regular file: a FIFO would wait for a writer
// forever, a device may never end. A bigger file is refused before it is
// read.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFileBytes
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, notRegularFile(path, fi.Mode())
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegularFile(path, fi.Mode())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s holds %s, more than the %s it may hold: it is not read", path, sizeText(fi.Size()), sizeText(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s holds more than the %s it may hold: it is not read", path, sizeText(limit))
	}
	return data, nil
}

func notRegularFile(path string, m fs.FileMode) error {
	return fmt.Errorf("%q is %s, not a regular file: it is not read", path, FileType(m))
}

func (s *authorized) NonRegular(ctx context.Context, prefix string) iter.Seq2[NonRegularEntry, error] {
	return ListNonRegular(ctx, s.inner, prefix)
}
