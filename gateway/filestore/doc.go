// Package filestore is the local-disk gateway.Store, ckgate's embedded
// default: every object is a regular file under a root directory, and every
// key is a '/'-separated path below it.
//
// # URLs
//
// Open serves file:// URLs: file:///var/lib/ckgate/q1 names the root
// directory /var/lib/ckgate/q1 (an empty host or "localhost" only). Plain
// paths such as ./checkpoints or /data/q1 work too, because gateway.ParseURL
// turns them into file:// URLs of their absolute form before the registry
// calls Open. Open does not require the directory to exist (so MakeBucket
// can create it); until it does, every request fails with ErrNotFound
// naming the root. New, for programs that build a store by hand, refuses a
// missing directory.
//
// # Durability and atomicity
//
// A write goes to a temp file in the key's own directory; the byte count
// is checked, the file's data is made durable (fdatasync), then it is
// published under its final name and the directory is fsynced, once. A
// create-only (IfAbsent) write publishes with link(2), which fails with
// EEXIST when the name is taken, so of N racing writers exactly one wins,
// across goroutines and processes alike; there is never a stat-then-rename
// window. On Linux its temp is unnamed (O_TMPFILE, linked with linkat(2)
// through /proc/self/fd), so a crash before the link leaves nothing;
// elsewhere, and where the file system cannot, it is named
// ".ckgate-tmp-<random>". Unconditional and compare-and-swap (IfMatch)
// writes publish a named temp with rename(2) while holding the key's lock.
// A crashed writer leaves at most a named temp file, which is never
// listed, never read and never in the way of a later write. A cancelled
// context stops a write before it is published. docs/local-store.md says
// what is synced and why.
//
// All access goes through an os.Root, so ".." and symbolic links that lead
// out of the root are refused (ErrInvalidKey). Key segments that start with
// ".ckgate-" are reserved for the store's temp and lock files and refused
// too; other dotfiles (Spark's ".0.crc") are ordinary keys. Deleting a key
// leaves its (possibly empty) directory in place: directories are never
// objects, so listings are unaffected, and no writer can lose its directory
// to a concurrent delete.
//
// # Versions and locks
//
// A version is the hex stamp "<inode>-<mtime ns>-<size>" of the published
// file. Every write creates a new inode and stamps it with the current time
// in nanoseconds, and a file is never changed in place, so a stamp names one
// write. ABA (a later write repeating an earlier stamp) needs the same
// inode number reused for the same key with the same size and the same
// nanosecond timestamp; an inode number is only reused after the file that
// held it was replaced or deleted, that is after its write finished, so the
// later write carries a later timestamp unless the wall clock steps back by
// the gap between the two writes.
//
// IfMatch writes, unconditional writes and deletes of a key hold an
// exclusive flock(2) on one of 1024 lock files under
// "_ckgate/.ckgate-locks" in the root (chosen by a hash of the key), so
// compare-and-swap is atomic across processes sharing the directory. A
// waiter blocks without spinning and gives up when its context ends; the
// kernel drops a lock when its process dies, so a crashed writer never
// blocks others. Create-only writes and reads need no lock: link(2) is
// atomic, and a key that exists cannot disappear while a locked writer
// holds it. The lock files are never removed (unlinking a lock file that
// another process holds would let a third lock a new file of the same
// name); they are never listed and their names are refused as keys.
//
// The lock files live under _ckgate/, ckgate's own directory, so a Spark
// checkpoint that ckgate only reads, inspects, validates or prunes gains
// nothing beside Spark's files outside _ckgate/. Earlier versions kept
// them in ".ckgate-locks" at the top of the root. For a root that still
// has that directory, every lock is also taken there (first, in the same
// stripe), so an earlier ckgate still running on the root and this one
// exclude each other; a root without it never gets one. The one case this
// does not cover is an earlier ckgate whose first lock on a root comes
// after this one checked for the directory: a writer session only takes
// a lock to renew or take over the writer record, which a second writer
// does only once the first one's lease has run out, by which time the
// first one's heartbeats have made the directory. Remove .ckgate-locks once
// no earlier ckgate runs on the root.
//
// # Owners
//
// A process running as root on a root directory that belongs to another
// user (an operator probing, inspecting or pruning a job's checkpoint)
// gives every directory and file the store creates (the key's
// directories, the temp file that becomes the object, the lock directory
// and lock files) to the owner and group of the root directory, so the job
// can still write there afterwards; MakeBucket likewise gives the
// directories it creates to the owner of the nearest existing parent. A
// lock file that exists keeps its owner. Giving is best effort: a file system that refuses chown (NFS with
// root squashed, one without owners) keeps the process's owner rather than
// failing the write. Any other process creates paths as itself, as usual.
//
// # Errors
//
// Every error is a *gateway.Error naming the key (or the root); the
// syscall error stays reachable with errors.As and errors.Is:
//
//   - ENOENT, and a key that is a directory or lies under a regular file:
//     ErrNotFound on reads and deletes.
//   - a key that is a FIFO, a device or a socket: ErrInvalidKey, saying what
//     it is (gateway.NotRegular). Reads open with O_NONBLOCK and check the
//     opened file with fstat, so such a key never blocks a reader; List
//     skips it, and NonRegular lists it.
//   - EACCES, EPERM and EROFS: ErrPermission, never ErrNotFound.
//   - EEXIST from link(2): ErrExists.
//   - a key that escapes the root (".." or a symbolic link out of it),
//     ELOOP, ENAMETOOLONG and reserved names: ErrInvalidKey.
//   - a write whose key is a directory or lies under an existing object,
//     which a file system cannot hold: ErrUnsupported.
//   - ENOSPC and EDQUOT: ErrUnavailable. Unlike restic, which treats a full
//     disk as permanent, ckgate's retention can free space while a query
//     waits, so the write may succeed later; callers that want to stop at
//     once test errors.Is(err, syscall.ENOSPC).
//   - a cancelled context, a closed store and other I/O errors:
//     ErrUnavailable, with the context's error kept.
package filestore
