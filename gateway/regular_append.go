package gateway

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularFileError is AppendRegularFile's refusal of a local path that
// names something other than a regular file (a FIFO, a device, a socket, a
// directory, a link to one); Mode is what the path turned out to be.
type NotRegularFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularFileError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, FileType(e.Mode))
}

// AppendRegularFile opens the local file name for appending, creating it
// (mode 0600) when absent: a log the caller writes lines to (an access
// log, the policy decision log). Anything but a regular file (a FIFO, a
// device, a socket, a directory, a link to one) is refused before anything
// is written with a *NotRegularFileError naming what it is; a FIFO put
// there between the check and the open does not block it.
func AppendRegularFile(name string) (*os.File, error) {
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, &NotRegularFileError{Path: name, Mode: fi.Mode()}
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &NotRegularFileError{Path: name, Mode: fi.Mode()}
	}
	return f, nil
}
