package s3atrace

import (
	"context"
	"errors"
	"fmt"
)

// Kind is what a step sends.
type Kind string

// The kinds of step.
const (
	Probe      Kind = "probe"       // HEAD key + LIST key/ (exists?); for an overwritable file, the rename's DELETE of an existing destination
	PutTemp    Kind = "put-temp"    // PUT of a temp file beside the key
	Copy       Kind = "copy"        // CopyObject temp → key with x-amz-copy-source-if-match (the rename)
	DeleteTemp Kind = "delete-temp" // DELETE of the temp (after the rename, or cancel() after a failed one)
	Put        Kind = "put"         // a direct PUT of the key (If-None-Match: * for a log entry)
	Multipart  Kind = "multipart"   // CreateMultipartUpload + UploadPart of every part
	Complete   Kind = "complete"    // CompleteMultipartUpload
	List       Kind = "list"        // LIST of a log directory before a purge
	Delete     Kind = "delete"      // DELETEs of a purge
)

// A Step is one S3A file-system call of a driver: one or a few requests.
type Step struct {
	Name  string // e.g. "batch 3: COPY q1/offsets/.3.<uuid>.tmp → q1/offsets/3"
	Batch int64  // the batch it belongs to; -1 for the query's start
	Kind  Kind
	Key   string // the object it writes (or probes, lists, deletes)
	// Group names the file the step is part of (its final key): a failure
	// skips the rest of the group except the steps marked Always.
	Group string
	// Always: the step runs even after an earlier step of its group
	// failed (the temp's DELETE: Spark's cancel()).
	Always bool
	Do     func(ctx context.Context) error
}

// ErrExists is Spark's FileAlreadyExistsException: a probe found the log
// entry the driver is about to create (another query wrote it).
var ErrExists = errors.New("file already exists")

// Run runs steps in order and returns the first failure, wrapped with the
// step's name. After a failure it runs only the remaining Always steps of
// the failed step's group, then stops: what Spark does when a write
// fails.
func Run(ctx context.Context, steps []Step) error {
	var first error
	failed := ""
	for _, s := range steps {
		if first != nil && (s.Group != failed || !s.Always) {
			if s.Group != failed {
				break
			}
			continue
		}
		if err := s.Do(ctx); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", s.Name, err)
			failed = s.Group
		}
	}
	return first
}

// Count returns how many of steps are of kind k.
func Count(steps []Step, k Kind) int {
	n := 0
	for _, s := range steps {
		if s.Kind == k {
			n++
		}
	}
	return n
}
