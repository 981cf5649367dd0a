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
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[gateway.Attrs, error] {
	return func(yield func(gateway.Attrs, error) bool) {
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
		l := &lister{ctx: ctx, root: root, prefix: prefix, yield: yield}
		l.walk(start)
	}
}

type lister struct {
	ctx    context.Context
	root   *os.Root
	prefix string
	yield  func(gateway.Attrs, error) bool
}

type listEntry struct {
	key     string // full key of the entry
	sortKey string // key, plus "/" for a directory
	dir     bool
	info    fs.FileInfo // resolved info of a symbolic link, else nil
	de      fs.DirEntry
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
	f, err := l.root.Open(name)
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
			if err != nil || !fi.Mode().IsRegular() {
				continue // dangling, out of the root, or not a file
			}
			e.info = fi
		case !t.IsRegular():
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
		if e.dir {
			if !l.walk(e.key) {
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
