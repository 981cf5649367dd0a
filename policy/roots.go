package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/ckgate/ckgate/gateway"
)

// Checkpoint roots. A directory is a checkpoint root when it holds a
// `metadata` entry of any kind (a file, a directory, a link, a FIFO: a
// damaged metadata still protects its tree), or when its `offsets/` or
// `commits/` directory holds a log-entry name (a decimal batch id): the
// rule inspect uses, so a checkpoint whose metadata is missing is still one.
// The layout's own files are not roots: `state/<op>/_metadata` holds an
// operator's metadata, part of the enclosing checkpoint.
//
// A key is protected relative to every root above it, not only the nearest
// one, so planting a `metadata` file below a root cannot move the root.

// RootFinder finds the checkpoint roots above canonical locations. What it
// learns is kept for its lifetime: a directory found to be a root stays one
// (protection only grows), and one found not to be is not asked again. A
// write of a log entry or of a `metadata` file through the guard marks its
// root at once.
type RootFinder struct {
	top   string // the directories it can probe are top and those below it
	probe func(ctx context.Context, dir string) (bool, error)

	mu    sync.Mutex
	known map[string]bool
}

// NewRootFinder returns the finder for locations below container, the
// canonical location of a bucket, an Azure container or the local disk
// ("file:///"). On the local disk it reads the file system directly; on a
// cloud store it asks s, a store opened at container (Stat of metadata,
// short listings of offsets/ and commits/). Declare adds roots known
// without probing.
func NewRootFinder(container string, s gateway.Store) *RootFinder {
	f := &RootFinder{top: container, known: map[string]bool{}}
	if _, ok := gateway.FilePath(container); ok {
		f.probe = func(_ context.Context, dir string) (bool, error) { return fileIsRoot(dir) }
	} else {
		f.probe = func(ctx context.Context, dir string) (bool, error) {
			name := strings.TrimPrefix(strings.TrimPrefix(dir, container), "/")
			return storeIsRoot(ctx, s, name)
		}
	}
	return f
}

// Declare makes root a checkpoint root for the finder's lifetime.
func (f *RootFinder) Declare(root string) {
	f.mu.Lock()
	f.known[root] = true
	f.mu.Unlock()
}

// Above returns the checkpoint roots strictly above loc, outermost first.
func (f *RootFinder) Above(ctx context.Context, loc string) ([]string, error) {
	var roots []string
	for _, dir := range ancestors(loc) {
		f.mu.Lock()
		is, seen := f.known[dir]
		f.mu.Unlock()
		if !seen && (dir == f.top || gateway.InsideLocation(dir, f.top)) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var err error
			if is, err = f.probe(ctx, dir); err != nil {
				return nil, fmt.Errorf("is %s a checkpoint root: %w", dir, err)
			}
			f.mu.Lock()
			f.known[dir] = f.known[dir] || is
			f.mu.Unlock()
		}
		if is {
			roots = append(roots, dir)
		}
	}
	return roots, nil
}

// Wrote tells the finder that loc was written: a log entry or a metadata
// file makes its directory a root (or its root's, for offsets/N).
func (f *RootFinder) Wrote(loc string) {
	dir, name := splitLocation(loc)
	switch {
	case name == "metadata" && !operatorMetadataDir(dir):
	case gateway.AllDigits(name) && (strings.HasSuffix(dir, "/offsets") || strings.HasSuffix(dir, "/commits")):
		dir, _ = splitLocation(dir)
	default:
		return
	}
	f.mu.Lock()
	f.known[dir] = true
	f.mu.Unlock()
}

// ancestors are the directories strictly above loc, outermost first: for
// "s3://b/x/y/k", "s3://b", "s3://b/x", "s3://b/x/y"; for "file:///a/k",
// "file:///" and "file:///a".
func ancestors(loc string) []string {
	var out []string
	for {
		dir, name := splitLocation(loc)
		if name == "" || dir == loc {
			break
		}
		out = append(out, dir)
		loc = dir
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// splitLocation splits a location into its directory and last name; the
// top of a location (a bucket, "file:///") has no name.
func splitLocation(loc string) (dir, name string) {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		return loc, ""
	}
	top := len(scheme) + 3 // after "scheme://"
	switch scheme {
	case "file":
		top++ // the leading '/'
	case "az":
		// az://account/container
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			top += i + 1
			if j := strings.IndexByte(rest[i+1:], '/'); j >= 0 {
				top += j
			} else {
				return loc, ""
			}
		} else {
			return loc, ""
		}
	default:
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return loc, ""
		}
		top += i
	}
	if len(loc) <= top {
		return loc, ""
	}
	i := strings.LastIndexByte(loc, '/')
	if scheme == "file" && i == top-1 {
		return "file:///", loc[i+1:]
	}
	if i < top {
		return loc, ""
	}
	return loc[:i], loc[i+1:]
}

// operatorMetadataDir reports whether dir (a location or a '/'-separated
// name) is a state operator's metadata directory (.../state/<op>/_metadata).
func operatorMetadataDir(dir string) bool {
	segs := strings.Split(dir, "/")
	n := len(segs)
	return n >= 3 && segs[n-1] == "_metadata" && segs[n-3] == "state"
}

// fileIsRoot probes a local directory without following a link at its
// last name and without opening anything but directories.
func fileIsRoot(dir string) (bool, error) {
	if operatorMetadataDir(dir) {
		return false, nil
	}
	p, _ := gateway.FilePath(dir)
	switch _, err := os.Lstat(filepath.Join(p, "metadata")); {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
	default:
		return false, err
	}
	for _, log := range []string{"offsets", "commits"} {
		ok, err := dirHasBatchName(filepath.Join(p, log))
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// dirHasBatchName reports whether the directory p (not a link to one)
// holds a decimal name.
func dirHasBatchName(p string) (bool, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	case err != nil:
		return false, err
	case !fi.IsDir():
		return false, nil
	}
	d, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			if gateway.AllDigits(n) {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) || len(names) == 0 {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// storeIsRoot probes the directory name (a key prefix, "" for the top) of
// a store opened at its container.
func storeIsRoot(ctx context.Context, s gateway.Store, name string) (bool, error) {
	dir := name
	if dir != "" {
		dir += "/"
	}
	if operatorMetadataDir(name) {
		return false, nil
	}
	switch _, err := s.Stat(ctx, dir+"metadata"); {
	case err == nil:
		return true, nil
	case !errors.Is(err, gateway.ErrNotFound):
		return false, err
	}
	for a, err := range s.List(ctx, dir+"metadata/") {
		if err != nil {
			return false, err
		}
		_ = a // a "directory" named metadata
		return true, nil
	}
	for _, log := range []string{"offsets/", "commits/"} {
		for a, err := range s.List(ctx, dir+log) {
			if err != nil {
				return false, err
			}
			rest := strings.TrimPrefix(a.Key, dir+log)
			if gateway.AllDigits(rest) {
				return true, nil
			}
			if rest != "" && rest[0] > '9' {
				break // names sort in byte order: no decimal name follows
			}
		}
	}
	return false, nil
}
