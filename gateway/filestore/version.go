package filestore

import (
	"io/fs"
	"strconv"
	"syscall"

	"github.com/ckgate/ckgate/gateway"
)

// version returns the stamp "<inode>-<mtime ns>-<size>" of a published
// file (see the package documentation, # Versions and locks).
func version(fi fs.FileInfo) gateway.Version {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	b := make([]byte, 0, 48)
	b = strconv.AppendUint(b, ino, 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.Size(), 16)
	return gateway.Version(b)
}

func attrs(key string, fi fs.FileInfo) gateway.Attrs {
	return gateway.Attrs{Key: key, Size: fi.Size(), Version: version(fi), Modified: fi.ModTime()}
}
