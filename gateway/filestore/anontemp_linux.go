package filestore

import (
	"errors"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Create-only writes on Linux write an unnamed temp file (O_TMPFILE) in
// the key's directory and publish it with linkat(2) through
// /proc/self/fd, which fails with EEXIST when the name is taken: the temp
// never has a name, so nothing is left to remove after the link and a
// crash before it leaves nothing at all (the kernel frees the unlinked
// inode). File systems without O_TMPFILE, and processes without /proc,
// write a named temp file instead.

// procFDs reports whether /proc/self/fd is there to link unnamed files by.
// Tests replace it to run the named-temp fallback.
var procFDs = sync.OnceValue(func() bool {
	fi, err := os.Stat("/proc/self/fd")
	return err == nil && fi.IsDir()
})

// openAnon opens an unnamed temp file for writing in the directory dir.
// ok is false, with nothing created, when the file system or the process
// cannot do it: the caller writes a named temp file instead.
func openAnon(dir *os.File) (f *os.File, ok bool, err error) {
	if !procFDs() {
		return nil, false, nil
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		return nil, false, err
	}
	fd := -1
	var oerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if oerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return nil, false, err
	}
	switch {
	case errors.Is(oerr, unix.EOPNOTSUPP), errors.Is(oerr, unix.EISDIR), errors.Is(oerr, unix.EINVAL):
		return nil, false, nil // no O_TMPFILE here
	case oerr != nil:
		return nil, true, &os.PathError{Op: "open", Path: dir.Name() + " (O_TMPFILE)", Err: oerr}
	}
	return os.NewFile(uintptr(fd), dir.Name()+" (unnamed temp)"), true, nil
}

// anonPath is the name an unnamed file f can be reached by.
func anonPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// linkAnon gives the unnamed file f the name base in the directory dir;
// EEXIST when base is taken (by anything, a dangling symbolic link too:
// linkat never follows its new name).
func linkAnon(f, dir *os.File, base string) error {
	rc, err := dir.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(dfd uintptr) {
		for {
			lerr = unix.Linkat(unix.AT_FDCWD, anonPath(f), int(dfd), base, unix.AT_SYMLINK_FOLLOW)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if lerr != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: base, Err: lerr}
	}
	return nil
}

// datasync makes f's data and size durable (fdatasync(2)): what a reader
// needs to get the bytes back. Its timestamps ride with the next journal
// commit, which the directory fsync that publishes the file forces on
// journaling file systems; see the package documentation, # Durability.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
