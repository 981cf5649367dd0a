package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// CommitterKey is where a checkpoint root written through a shared front
// door (ckgate serve) records the driver process that committed its latest
// batch, relative to the root. A process that a newer one has committed
// over is a zombie: its writes under the root are refused (policy rule
// CKG-P015). Processes are named by the client (S3A's audit referrer
// carries its process id); without a name only log-entry atomicity holds.
const CommitterKey = "_ckgate/committer"

// RootOwnerKey is where a checkpoint root records the principal that owns
// it, relative to the root: written create-only by the first job principal
// to write the root's metadata (or, for a root that has none yet, to write
// under it) through a guard made with root owners (policy.WithRootOwners).
// A restart of the process, or another replica beside it, reads the same
// record.
const RootOwnerKey = "_ckgate/root-owner"

// maxFenced bounds the fenced processes a committer record keeps: a zombie
// older than that many driver restarts is no longer recognised.
const maxFenced = 64

// maxCommitterBytes bounds the read of a committer record.
const maxCommitterBytes = 16 << 10

// Committer is the content of CommitterKey.
type Committer struct {
	Process string    `json:"process"` // the process that committed Batch
	Batch   int64     `json:"batch"`
	Fenced  []string  `json:"fenced,omitempty"` // processes committed over, oldest first
	Time    time.Time `json:"time"`
	WriteID string    `json:"write_id"` // fresh per write: a CAS never sees the same bytes twice
}

// IsFenced reports whether process has been committed over.
func (c Committer) IsFenced(process string) bool {
	return process != "" && process != c.Process && slices.Contains(c.Fenced, process)
}

type processKey struct{}

// WithWriterProcess returns ctx naming the client process a write comes
// from (S3A's audit referrer `ps` field), for committer records and
// fencing. An empty id names none.
func WithWriterProcess(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, processKey{}, id)
}

// WriterProcess is the process WithWriterProcess put in ctx, or "".
func WriterProcess(ctx context.Context) string {
	id, _ := ctx.Value(processKey{}).(string)
	return id
}

// ReadCommitter reads the committer record of the root at rootKey (a key
// of s; "" for the store's root). ErrNotFound when the root has none.
func ReadCommitter(ctx context.Context, s Store, rootKey string) (Committer, Version, error) {
	key := committerKey(rootKey)
	data, v, err := GetBounded(ctx, s, key, maxCommitterBytes)
	if err != nil {
		return Committer{}, "", err
	}
	var c Committer
	if err := json.Unmarshal(data, &c); err != nil || c.Process == "" {
		return Committer{}, "", fmt.Errorf("committer record %s is corrupt (want {\"process\", \"batch\", ...}): %v", key, err)
	}
	return c, v, nil
}

// RecordCommit notes that process committed batch of the root at rootKey:
// the record moves to process, and the process it held before is fenced.
// A record already at a later batch is left alone. Concurrent recorders
// are ordered by compare-and-swap.
func RecordCommit(ctx context.Context, s Store, rootKey, process string, batch int64) error {
	if process == "" {
		return nil
	}
	key := committerKey(rootKey)
	for range 16 {
		cur, v, err := ReadCommitter(ctx, s, rootKey)
		absent := errors.Is(err, ErrNotFound)
		if err != nil && !absent {
			return err
		}
		if !absent && (cur.Batch > batch || cur.Batch == batch) {
			return nil // a later (or this) batch is recorded: one commit per batch
		}
		next := Committer{Process: process, Batch: batch, Time: time.Now().UTC(), WriteID: NewWriteID()}
		next.Fenced = slices.DeleteFunc(slices.Clone(cur.Fenced), func(p string) bool { return p == process })
		if !absent && cur.Process != process {
			next.Fenced = append(next.Fenced, cur.Process)
		}
		if n := len(next.Fenced); n > maxFenced {
			next.Fenced = next.Fenced[n-maxFenced:]
		}
		data, err := json.Marshal(next)
		if err != nil {
			return err
		}
		cond := IfAbsent()
		if !absent {
			cond = IfMatch(v)
		}
		_, err = s.Put(ctx, key, data, cond)
		if err == nil || (!errors.Is(err, ErrExists) && !errors.Is(err, ErrPrecondition)) {
			return err
		}
	}
	return fmt.Errorf("%w: committer record %s: too many concurrent updates", ErrUnavailable, key)
}

func committerKey(rootKey string) string {
	if rootKey = strings.TrimSuffix(rootKey, "/"); rootKey == "" {
		return CommitterKey
	}
	return rootKey + "/" + CommitterKey
}
