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
	b.tidy = tidyPreflight(root)
	b.credentials = func(context.Context) outcome {
		// "credentials: uid=..." would read as a secret assignment to the
		// redactor: say it without the colon.
		msg := "the process runs as " + describeProcess()
		if os.Geteuid() == 0 {
			msg += " (root: the kernel skips permission checks; --as-user probes as the job's user)"
		}
		return passf(msg)
	}
	if os.Geteuid() == 0 {
		b.warnings = append(b.warnings, RootWarning)
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

// RootWarning is the report's warning for a run as root on a local disk.
const RootWarning = "running as root, whom the kernel lets past every permission check, so these probes pass whatever the modes are; " +
	"the job principal is probably not root: run again with --as-user USER (the job's user name or uid) to probe as it"

// tidyPreflight returns the cleanup step of a run on a local disk: it
// removes the probe directory (PreflightPrefix) when this run created it
// and it is empty again, so a run leaves no more than the store's lock
// files under _ckgate/. What the store created belongs to the owner of the
// root directory even when the run is root's (see package filestore).
func tidyPreflight(root string) func() string {
	dir := strings.TrimSuffix(PreflightPrefix, "/")
	_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir)))
	existed := !errors.Is(err, fs.ErrNotExist)
	return func() string {
		if existed {
			return ""
		}
		// Only an empty directory goes (a concurrent run's probe keys
		// stay), and only inside the root: through os.Root, a symbolic
		// link put in the way leads nowhere else.
		r, err := os.OpenRoot(root)
		if err != nil {
			return ""
		}
		defer r.Close()
		if err := r.Remove(filepath.FromSlash(dir)); err != nil {
			return ""
		}
		return "removed the probe directory " + dir + " it created"
	}
}
