package gateway

import (
	"fmt"
	"os"
	"syscall"
)

// AppendRegularFile opens the local file name for appending, creating it
// (mode 0600) when absent: a log the caller writes lines to. Anything but a
// regular file (a FIFO, a device, a socket, a directory, a link to one) is
// refused before anything is written, the error naming what it is; a FIFO
// put there between the check and the open does not block it.
func AppendRegularFile(name string) (*os.File, error) {
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", name, FileType(fi.Mode()))
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
		return nil, fmt.Errorf("%s is %s, not a regular file", name, FileType(fi.Mode()))
	}
	return f, nil
}
