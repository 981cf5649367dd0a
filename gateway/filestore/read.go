package filestore

import (
	"context"
	"io"
	"io/fs"
	"os"

	"github.com/ckgate/ckgate/gateway"
)

// openObject opens key for reading and returns the file and its info. A
// directory is not an object: ErrNotFound.
func (s *Store) openObject(ctx context.Context, op, key string) (*os.File, fs.FileInfo, error) {
	root, err := s.begin(ctx, op, key)
	if err != nil {
		return nil, nil, err
	}
	p, _ := keyPath(op, key)
	f, err := root.Open(p)
	if err != nil {
		return nil, nil, gateway.E(op, key, kindOf(err), err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errKeyIsDir
		if !fi.IsDir() {
			err = &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
		}
		f.Close()
		return nil, nil, gateway.E(op, key, gateway.ErrNotFound, err)
	}
	if err != nil {
		f.Close()
		return nil, nil, gateway.E(op, key, kindOf(err), err)
	}
	return f, fi, nil
}

// Get returns the object's bytes and version. The bytes and the version
// come from one open file, so they always belong together.
func (s *Store) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
	f, fi, err := s.openObject(ctx, "get", key)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, "", gateway.E("get", key, kindOf(err), err)
	}
	return data, version(fi), nil
}

// GetStream opens the object for reading; the caller closes it.
func (s *Store) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	f, fi, err := s.openObject(ctx, "get", key)
	if err != nil {
		return nil, gateway.Attrs{}, err
	}
	return f, attrs(key, fi), nil
}

// Stat returns the object's attributes.
func (s *Store) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	root, err := s.begin(ctx, "stat", key)
	if err != nil {
		return gateway.Attrs{}, err
	}
	fi, err := statObject(root, "stat", key)
	if err != nil {
		return gateway.Attrs{}, err
	}
	return attrs(key, fi), nil
}

// statObject stats key (following links inside the root) and refuses
// anything but a regular file with ErrNotFound.
func statObject(root *os.Root, op, key string) (fs.FileInfo, error) {
	p, _ := keyPath(op, key)
	fi, err := root.Stat(p)
	if err != nil {
		return nil, gateway.E(op, key, kindOf(err), err)
	}
	if fi.IsDir() {
		return nil, gateway.E(op, key, gateway.ErrNotFound, errKeyIsDir)
	}
	if !fi.Mode().IsRegular() {
		return nil, gateway.E(op, key, gateway.ErrNotFound, &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist})
	}
	return fi, nil
}
