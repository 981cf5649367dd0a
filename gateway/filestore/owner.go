package filestore

import (
	"io/fs"
	"os"
	"syscall"
)

// owner is whom the store gives what it creates: the owner of the root
// directory, when the process runs as root and the root belongs to
// someone else (a job user's checkpoint that an operator inspects, probes
// or prunes as root). Otherwise it is unset and new files and directories
// belong to the process, as usual.
type owner struct {
	set      bool
	uid, gid int
}

// ownerOf returns the owner to give new paths under a root directory
// described by fi.
func ownerOf(fi fs.FileInfo) owner {
	if os.Geteuid() != 0 || fi == nil {
		return owner{}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (st.Uid == 0 && int(st.Gid) == os.Getegid()) {
		return owner{}
	}
	return owner{set: true, uid: int(st.Uid), gid: int(st.Gid)}
}

// dir gives the directory (or file) name, which the store has just
// created, to the owner. It is best effort: a file system that refuses
// the change (root squashed on NFS, one without owners) keeps the
// process's owner rather than failing the write.
func (o owner) dir(root *os.Root, name string) {
	if o.set {
		_ = root.Lchown(name, o.uid, o.gid)
	}
}

// file gives the open file f, which the store has just created, to the
// owner; best effort, as dir.
func (o owner) file(f *os.File) {
	if o.set {
		_ = f.Chown(o.uid, o.gid)
	}
}
