package validate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// openFile opens a local-disk store. The principal is the process's own
// uid and gid (the child's, with --as-user).
func openFile(ctx context.Context, u *url.URL, red *redactor) (*backend, error) {
	s, err := filestore.Open(ctx, u)
	if err != nil {
		return nil, usagef("%w", err)
	}
	fst := s.(*filestore.Store)
	root := fst.Root()
	b := &backend{shown: "file://" + root, store: s, red: red, closers: []func() error{s.(gateway.Closer).Close}}
	before := snapshotCreated(root)
	b.tidy = func() string { return giveBack(root, before) }
	b.credentials = func(context.Context) outcome {
		msg := "the process's credentials: " + describeProcess()
		if os.Geteuid() == 0 {
			msg += " (root: the kernel skips permission checks; --as-user probes as the job's user)"
		}
		return passf(msg)
	}
	b.identify = func(context.Context) identity {
		return processIdentity()
	}
	b.container = func(context.Context) outcome {
		return rootDir(root)
	}
	return b, nil
}

// processIdentity names the uid and gid the kernel checks.
func processIdentity() identity {
	uid, gid := os.Getuid(), os.Getgid()
	uname, gname := lookupUser(uid), lookupGroup(gid)
	id := identity{principal: fmt.Sprintf("uid=%d(%s) gid=%d(%s)", uid, uname, gid, gname)}
	id.aliases = []string{strconv.Itoa(uid), fmt.Sprintf("%d:%d", uid, gid)}
	if uname != "?" {
		id.aliases = append(id.aliases, uname)
		if gname != "?" {
			id.aliases = append(id.aliases, uname+":"+gname)
		}
	}
	id.outcome = passf("the kernel checks " + describeProcess())
	return id
}

func describeProcess() string {
	uid, gid := os.Getuid(), os.Getgid()
	s := fmt.Sprintf("uid=%d(%s) gid=%d(%s)", uid, lookupUser(uid), gid, lookupGroup(gid))
	if groups, err := os.Getgroups(); err == nil && len(groups) > 0 {
		var g []string
		for _, id := range groups {
			g = append(g, strconv.Itoa(id))
		}
		s += " groups=" + strings.Join(g, ",")
	}
	return s
}

func lookupUser(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return "?"
}

func lookupGroup(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return "?"
}

// rootDir checks that the root directory exists and is a directory.
func rootDir(root string) outcome {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return outcome{status: Fail, message: "the root directory " + root + " does not exist",
			err: gateway.E("stat", root, gateway.ErrNotFound, err), address: root}
	case errors.Is(err, fs.ErrPermission):
		return outcome{status: Unknown, message: "cannot look up the root directory " + root,
			err: gateway.E("stat", root, gateway.ErrPermission, err), address: root}
	case err != nil:
		return outcome{status: Fail, err: gateway.E("stat", root, gateway.ErrUnavailable, err), address: root}
	case !fi.IsDir():
		return outcome{status: Fail, code: "ENOTDIR", message: root + " is not a directory", address: root}
	}
	msg := fmt.Sprintf("%s is a directory, mode %s", root, fi.Mode())
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		msg += fmt.Sprintf(", owner uid=%d(%s) gid=%d(%s)", st.Uid, lookupUser(int(st.Uid)), st.Gid, lookupGroup(int(st.Gid)))
	}
	return outcome{status: Pass, message: msg, address: root}
}

// Paths the local store creates besides the probe keys: the directories
// of the probe keys, and the lock directory and files of its
// compare-and-swap (see package filestore, "Versions and locks").
var createdDirs = []string{"_ckgate", "_ckgate/preflight", ".ckgate-locks"}

const lockDir = ".ckgate-locks"

// created is what existed under a root before a run.
type created struct {
	dirs  map[string]bool
	locks map[string]bool
}

func snapshotCreated(root string) created {
	c := created{dirs: map[string]bool{}, locks: map[string]bool{}}
	for _, d := range createdDirs {
		if _, err := os.Lstat(filepath.Join(root, d)); err == nil {
			c.dirs[d] = true
		}
	}
	if ents, err := os.ReadDir(filepath.Join(root, lockDir)); err == nil {
		for _, e := range ents {
			c.locks[e.Name()] = true
		}
	}
	return c
}

// giveBack hands what a run as root created under root (directories,
// lock files) to the owner of root, so that the job's own user can still
// write its checkpoint there afterwards. It does nothing unless the
// process is root and root belongs to another user. It returns a note
// for the report.
func giveBack(root string, before created) string {
	if os.Geteuid() != 0 {
		return ""
	}
	fi, err := os.Stat(root)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return ""
	}
	var paths []string
	for _, d := range createdDirs {
		if !before.dirs[d] {
			paths = append(paths, d)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(root, lockDir)); err == nil {
		for _, e := range ents {
			if !before.locks[e.Name()] {
				paths = append(paths, filepath.Join(lockDir, e.Name()))
			}
		}
	}
	var given []string
	for _, p := range paths {
		full := filepath.Join(root, p)
		lfi, err := os.Lstat(full)
		if err != nil {
			continue
		}
		if lst, ok := lfi.Sys().(*syscall.Stat_t); !ok || lst.Uid != 0 {
			continue
		}
		if os.Lchown(full, int(st.Uid), int(st.Gid)) == nil {
			given = append(given, p)
		}
	}
	if len(given) == 0 {
		return ""
	}
	shown := strings.Join(given[:min(len(given), 3)], ", ")
	if len(given) > 3 {
		shown += ", ..."
	}
	return fmt.Sprintf("gave %d paths the run created as root (%s) to uid %d gid %d, the owner of %s",
		len(given), shown, st.Uid, st.Gid, root)
}
