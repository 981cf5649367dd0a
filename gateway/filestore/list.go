package filestore

import (
	"context"
	"errors"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/ckgate/ckgate/gateway"
)

// List yields every object whose key starts with prefix, in byte order of
// the full keys. It walks only the directories the prefix can reach, and
// orders each directory's entries by name, a subdirectory counting as
// "name/": a depth-first walk in that order is byte order across
// directories ("a-b" < "a.b" < "a/b" < "a0"), so List streams without
// collecting the whole tree. Temp and lock files, directories, symbolic
// links to directories or out of the root, other non-regular files and
// names that are not valid keys are skipped. A prefix whose directory does
// not exist lists nothing; a missing root is ErrNotFound.
func (s *driver) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
		s.walk(ctx, prefix, yield, nil, nil)
	}
}

// NonRegular yields, in byte order, the names under prefix that List skips
// because they are not regular files: FIFOs, devices, sockets (and links
// inside the root to one). Directories are not yielded: they are prefixes.
func (s *driver) NonRegular(ctx context.Context, prefix string) iter.Seq2[gateway.NonRegularEntry, error] {
	return func(yield func(gateway.NonRegularEntry, error) bool) {
		s.walk(ctx, prefix, func(_ gateway.Attrs, err error) bool {
			return yield(gateway.NonRegularEntry{}, err)
		}, func(key string, m fs.FileMode) bool {
			return yield(gateway.NonRegularEntry{Key: key, Mode: m}, nil)
		}, nil)
	}
}

// walk lists prefix: regular files go to yield, unless odd is set, in which
// case only the non-regular ones go to odd (errors always go to yield).
// When skip is set, a file (by key) or directory (by key plus '/') it
// reports is passed over without being read.
func (s *driver) walk(ctx context.Context, prefix string, yield func(gateway.Attrs, error) bool, odd func(string, fs.FileMode) bool, skip func(name string, dir bool) bool) {
	if err := gateway.ValidatePrefix(prefix); err != nil {
		yield(gateway.Attrs{}, err)
		return
	}
	if err := ctx.Err(); err != nil {
		yield(gateway.Attrs{}, gateway.E("list", prefix, gateway.ErrUnavailable, err))
		return
	}
	root, err := s.openRoot("list", prefix)
	if err != nil {
		yield(gateway.Attrs{}, err)
		return
	}
	start := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
	}
	l := &lister{ctx: ctx, root: root, prefix: prefix, yield: yield, odd: odd, skip: skip}
	l.walk(start)
}

type lister struct {
	ctx    context.Context
	root   *os.Root
	prefix string
	yield  func(gateway.Attrs, error) bool
	odd    func(string, fs.FileMode) bool   // set: yield only non-regular files, to it
	skip   func(name string, dir bool) bool // set: what need not be read
}

type listEntry struct {
	key     string // full key of the entry
	sortKey string // key, plus "/" for a directory
	dir     bool
	info    fs.FileInfo // resolved info of a symbolic link, else nil
	de      fs.DirEntry
	odd     fs.FileMode // the type of a non-regular file, else 0
}

// fail reports err and stops the walk.
func (l *lister) fail(err error) bool {
	l.yield(gateway.Attrs{}, gateway.E("list", l.prefix, kindOf(err), err))
	return false
}

// walk lists the directory whose key is dir ("" for the root) and returns
// false once the walk must stop.
func (l *lister) walk(dir string) bool {
	if err := l.ctx.Err(); err != nil {
		return l.fail(err)
	}
	name := "."
	if dir != "" {
		name = filepath.FromSlash(dir)
	}
	// O_DIRECTORY: a prefix that names a FIFO fails at once (ENOTDIR)
	// instead of waiting for a writer.
	f, err := l.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		if dir != "" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			return true // nothing under a missing directory
		}
		return l.fail(err)
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		if dir != "" && errors.Is(err, syscall.ENOTDIR) {
			return true // the prefix's directory is an object
		}
		return l.fail(err)
	}

	ents := make([]listEntry, 0, len(des))
	for _, de := range des {
		if strings.HasPrefix(de.Name(), reservedPrefix) {
			continue
		}
		e := listEntry{key: de.Name(), de: de}
		if dir != "" {
			e.key = dir + "/" + de.Name()
		}
		if gateway.ValidateKey("list", e.key) != nil {
			continue // not a name this store could have written
		}
		switch t := de.Type(); {
		case t.IsDir():
			e.dir = true
		case t&fs.ModeSymlink != 0:
			fi, err := l.root.Stat(filepath.FromSlash(e.key))
			switch {
			case err != nil || fi.IsDir():
				continue // dangling, out of the root, or a directory
			case !fi.Mode().IsRegular():
				e.odd = fi.Mode().Type()
			}
			e.info = fi
		case !t.IsRegular():
			e.odd = t
		}
		if (e.odd != 0) != (l.odd != nil) && !e.dir {
			continue
		}
		e.sortKey = e.key
		if e.dir {
			e.sortKey += "/"
			if !strings.HasPrefix(e.sortKey, l.prefix) && !strings.HasPrefix(l.prefix, e.sortKey) {
				continue
			}
		} else if !strings.HasPrefix(e.key, l.prefix) {
			continue
		}
		ents = append(ents, e)
	}
	slices.SortFunc(ents, func(a, b listEntry) int { return strings.Compare(a.sortKey, b.sortKey) })

	for _, e := range ents {
		if l.skip != nil && l.skip(e.sortKey, e.dir) {
			continue
		}
		if e.dir {
			if !l.walk(e.key) {
				return false
			}
			continue
		}
		if e.odd != 0 {
			if !l.odd(e.key, e.odd) {
				return false
			}
			continue
		}
		fi := e.info
		if fi == nil {
			if fi, err = e.de.Info(); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // deleted since the directory was read
				}
				return l.fail(err)
			}
		}
		if !l.yield(attrs(e.key, fi), nil) {
			return false
		}
	}
	return true
}
