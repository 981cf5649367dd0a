package filestore

import (
	"context"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/ckgate/ckgate/gateway"
)

// openObject opens key for reading and returns the file and its info. The
// open never blocks (O_NONBLOCK: a FIFO would wait for a writer, a device
// may never answer), and what was opened is checked with fstat: anything
// but a regular file is refused with gateway.NotRegular (a directory, a
// prefix of other keys, is ErrNotFound; a FIFO, device or socket
// ErrInvalidKey), naming the key and what it is.
func (s *driver) openObject(ctx context.Context, op, key string) (*os.File, fs.FileInfo, error) {
	root, err := s.begin(ctx, op, key)
	if err != nil {
		return nil, nil, err
	}
	p, _ := keyPath(op, key)
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket (ENXIO) or a device may refuse the open itself: say
		// what the key is rather than how the open failed.
		if fi, serr := root.Stat(p); serr == nil && !fi.Mode().IsRegular() {
			return nil, nil, gateway.NotRegular(op, key, fi.Mode())
		}
		return nil, nil, gateway.E(op, key, kindOf(err), err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, gateway.E(op, key, kindOf(err), err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, gateway.NotRegular(op, key, fi.Mode())
	}
	return f, fi, nil
}

// Get returns the object's bytes and version. The bytes and the version
// come from one open file, so they always belong together.
func (s *driver) Get(ctx context.Context, key string) ([]byte, gateway.Version, error) {
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
func (s *driver) GetStream(ctx context.Context, key string) (io.ReadCloser, gateway.Attrs, error) {
	f, fi, err := s.openObject(ctx, "get", key)
	if err != nil {
		return nil, gateway.Attrs{}, err
	}
	return f, attrs(key, fi), nil
}

// Stat returns the object's attributes.
func (s *driver) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
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
// anything but a regular file with gateway.NotRegular.
func statObject(root *os.Root, op, key string) (fs.FileInfo, error) {
	p, _ := keyPath(op, key)
	fi, err := root.Stat(p)
	if err != nil {
		return nil, gateway.E(op, key, kindOf(err), err)
	}
	if !fi.Mode().IsRegular() {
		return nil, gateway.NotRegular(op, key, fi.Mode())
	}
	return fi, nil
}
