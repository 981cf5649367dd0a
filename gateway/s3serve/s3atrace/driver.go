package s3atrace

import (
	"crypto/rand"
	"fmt"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Manager is the checkpoint file manager a Spark query runs with.
type Manager int

const (
	// FileContext is Spark's default (FileContextBasedCheckpointFileManager
	// on s3a): temp PUT, COPY, DELETE.
	FileContext Manager = iota
	// Abortable is AbortableStreamBasedCheckpointFileManager: one direct
	// PUT, conditional (If-None-Match: *) for a log entry.
	Abortable
)

func (m Manager) String() string {
	if m == Abortable {
		return "abortable"
	}
	return "filecontext"
}

// Managers are both file managers, for tests that run each.
var Managers = []Manager{FileContext, Abortable}

// Driver is one Spark driver process writing one checkpoint through S3A.
// The zero values of the optional fields give a stateless query with
// Spark's defaults.
type Driver struct {
	Client  *s3.Client
	Bucket  string
	Root    string // the checkpoint's key prefix in Bucket, e.g. "q1" (no slashes around it)
	Manager Manager
	QueryID string // the id in metadata; "" picks a random UUID once

	// Process, when set, is S3A's audit referrer `ps` field on every
	// request (spark.hadoop.fs.s3a.audit.enabled); Principal its `pr`.
	Process, Principal string

	// Partitions is the number of state store partitions of operator 0;
	// 0 means a stateless query.
	Partitions int
	// State returns the files of state version v of partition p, in the
	// order they are uploaded, named relative to state/0/<p>/: files under
	// SSTs/ by multipart upload, the others as the manager's create with
	// overwrite. nil: HDFSDelta.
	State func(p int, v int64) []File
	// Provider is the state store provider class the offset log's conf
	// records ("": HDFSBackedStateStoreProvider).
	Provider string
	// PartSize splits a multipart upload (at least 5 MiB but the last); 0:
	// one part.
	PartSize int

	// Source: the query has a source that writes sources/0/0 at its start
	// (Kafka's initial offsets).
	Source bool
	// Sink, when set, is the key prefix of a file sink's output: each
	// batch writes a data file and _spark_metadata/N (N.compact every
	// CompactInterval, default 10).
	Sink            string
	CompactInterval int

	// MinBatchesToRetain > 0 purges: after offsets/N, offsets and commits
	// below N-MinBatchesToRetain, and state version N-MinBatchesToRetain.
	MinBatchesToRetain int

	// Temp, when set, returns the <uuid> part of each temp's name (default
	// a random UUID, as Spark's), for traces that must be reproducible.
	Temp func() string

	// Bodies overrides what the log entries hold (nil fields: defaults).
	Bodies Bodies

	span atomic.Int64
}

// File is one file of a state version.
type File struct {
	Name string
	Data []byte
}

func (d *Driver) key(rel string) string {
	if d.Root == "" {
		return rel
	}
	return d.Root + "/" + rel
}

func (d *Driver) queryID() string {
	if d.QueryID == "" {
		d.QueryID = UUID()
	}
	return d.QueryID
}

// UUID returns a random version 4 UUID, as Java's UUID.randomUUID.
func UUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// opts returns the per-request options of a call of S3A operation op
// (op_create, op_rename, op_delete, …) on key: the audit referrer when
// the driver has a process.
func (d *Driver) opts(op, key string) []func(*s3.Options) {
	if d.Process == "" {
		return nil
	}
	return []func(*s3.Options){func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue("Referer", d.Referrer(op, key)))
	}}
}

// Referrer is the audit referrer S3A's LoggingAuditor sends for operation
// op on key: https://audit.example.org/hadoop/1/<op>/<span>/?op=…&p1=…&pr=…&ps=…&id=…&t0=…&fs=…&ts=…
func (d *Driver) Referrer(op, key string) string {
	span := fmt.Sprintf("%s-%d", d.Process, d.span.Add(1))
	q := url.Values{}
	q.Set("op", op)
	q.Set("p1", "s3a://"+d.Bucket+"/"+key)
	if d.Principal != "" {
		q.Set("pr", d.Principal)
	}
	q.Set("ps", d.Process)
	q.Set("id", span)
	q.Set("t0", "1")
	q.Set("fs", d.Process)
	q.Set("ts", strconv.FormatInt(time.Now().UnixMilli(), 10))
	return "https://audit.example.org/hadoop/1/" + op + "/" + span + "/?" + q.Encode()
}
