package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/source"
	"github.com/ckgate/ckgate/gateway"
)

// Keys that record a fresh start, with the same MigrationRecord: the old
// root's (next to ArchivedKey) and the new root's. A root that was started
// fresh and is itself fresh-started later holds both.
const (
	MigratedToKey   = checkpoint.CkgateDir + "/migrated-to.json"
	MigratedFromKey = checkpoint.CkgateDir + "/migrated-from.json"
)

// FreshStartOptions configure FreshStart.
type FreshStartOptions struct {
	// Source, Dest and NewRoot are the locations of the old root, the
	// archive and the new root, recorded (secrets redacted).
	Source, Dest, NewRoot string
	// Start is where the new root's first batch starts.
	Start source.StartPoint
	// FromTimestamp, when Start was resolved from a time, is that time
	// (recorded).
	FromTimestamp *time.Time
	// Principal and Reason are recorded; Reason is required.
	Principal Principal
	Reason    string
	// Concurrency, AllowLiveWriter and Now are as ArchiveOptions'.
	Concurrency     int
	AllowLiveWriter bool
	Now             func() time.Time
}

// MigrationRecord is the content of MigratedToKey and MigratedFromKey.
type MigrationRecord struct {
	Version        int               `json:"version"`
	OldRoot        string            `json:"old_root"`
	ArchivedTo     string            `json:"archived_to"`
	NewRoot        string            `json:"new_root"`
	Boundary       source.StartPoint `json:"boundary"`
	FromTimestamp  *time.Time        `json:"from_timestamp,omitempty"`
	Principal      Principal         `json:"principal"`
	Reason         string            `json:"reason"`
	Time           time.Time         `json:"time"`
	OldQueryID     string            `json:"old_query_id"`
	ManifestSHA256 string            `json:"manifest_sha256"`
}

// FreshStartResult is what FreshStart did.
type FreshStartResult struct {
	Archive   *ArchiveResult
	Migration MigrationRecord
	// Steps are what is left to the operator (isolated output,
	// reconciliation), in order.
	Steps []string
}

// FreshStart writes the start point of the new root (source.StartKey: a
// Kafka source's first run reads its initial offsets from it; a files
// source treats the files its boundary names, or that were modified before
// its time, as processed, on every run; the root must be empty, or
// hold only that same start point, left by a fresh start that failed
// later), then archives the checkpoint at src to dst with a fresh start
// (Archive with FreshStart: the old root gets ArchivedKey), then writes
// the migration record in the new root (MigratedFromKey) and then the old
// one (MigratedToKey), all create-only. A root already archived is
// refused (ErrArchived and gateway.ErrExists) before anything is
// written. Start holds either Kafka offsets (every partition at or above
// zero) or a files boundary (a time or processed files).
func FreshStart(ctx context.Context, src, dst, newRoot gateway.Store, opts FreshStartOptions) (*FreshStartResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Reason == "" {
		return nil, errors.New("a fresh start needs a reason")
	}
	if newRoot == nil {
		return nil, errors.New("a fresh start needs the new root")
	}
	if err := checkStart(opts.Start); err != nil {
		return nil, err
	}
	start, err := json.MarshalIndent(opts.Start, "", "  ")
	if err != nil {
		return nil, err
	}
	start = append(start, '\n')
	// The start point goes to the new root before the old one is marked:
	// a new root whose old one is archived always starts at the boundary,
	// never silently at the earliest offsets.
	if _, err := CheckNotArchived(ctx, src); err != nil {
		return nil, fmt.Errorf("%w: %w", err, gateway.ErrExists)
	}
	if err := putStart(ctx, newRoot, opts.NewRoot, start); err != nil {
		return nil, err
	}
	res, err := Archive(ctx, src, dst, ArchiveOptions{Source: opts.Source, Dest: opts.Dest, FreshStart: true,
		NewRoot: opts.NewRoot, Principal: opts.Principal, Reason: opts.Reason,
		Concurrency: opts.Concurrency, AllowLiveWriter: opts.AllowLiveWriter, Now: opts.Now})
	if err != nil {
		return nil, err
	}
	rec := MigrationRecord{Version: 1, OldRoot: gateway.Redact(opts.Source), ArchivedTo: res.Manifest.Dest,
		NewRoot: gateway.Redact(opts.NewRoot), Boundary: opts.Start, FromTimestamp: opts.FromTimestamp,
		Principal: opts.Principal, Reason: opts.Reason, Time: res.Marker.Time, OldQueryID: res.Manifest.QueryID,
		ManifestSHA256: res.ManifestSHA256}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	if _, err := newRoot.Put(ctx, MigratedFromKey, data, gateway.IfAbsent()); err != nil {
		return nil, fmt.Errorf("new root: write %s: %w", MigratedFromKey, err)
	}
	if _, err := src.Put(ctx, MigratedToKey, data, gateway.IfAbsent()); err != nil {
		return nil, fmt.Errorf("old root: write %s: %w", MigratedToKey, err)
	}
	return &FreshStartResult{Archive: res, Migration: rec, Steps: freshStartSteps(rec)}, nil
}

// putStart writes the start point to the new root, which must be empty
// but for the same start point (left by a fresh start that failed after
// writing it: a retry goes on).
func putStart(ctx context.Context, st gateway.Store, name string, start []byte) error {
	for a, err := range st.List(ctx, "") {
		if errors.Is(err, gateway.ErrNotFound) {
			break // a root not made yet is empty
		}
		if err != nil {
			return fmt.Errorf("list the new root: %w", err)
		}
		if a.Key == source.StartKey {
			continue
		}
		return fmt.Errorf("the new root %s holds %s: a fresh start needs an empty root: %w", gateway.Redact(name), a.Key, gateway.ErrExists)
	}
	if _, err := st.Put(ctx, source.StartKey, start, gateway.IfAbsent()); errors.Is(err, gateway.ErrExists) {
		got, _, gerr := gateway.GetBounded(ctx, st, source.StartKey, 0)
		if gerr != nil {
			return fmt.Errorf("new root: read %s: %w", source.StartKey, gerr)
		}
		if !bytes.Equal(got, start) {
			return fmt.Errorf("the new root %s holds another start point (%s): %w", gateway.Redact(name), source.StartKey, gateway.ErrExists)
		}
	} else if err != nil {
		return fmt.Errorf("new root: write %s: %w", source.StartKey, err)
	}
	return nil
}

// freshStartSteps are what FreshStart leaves to the operator.
func freshStartSteps(rec MigrationRecord) []string {
	return []string{
		fmt.Sprintf("point the query at the new root and run it into an isolated output (a new sink path or table) to reconcile before readers see it: ckgate run SPEC --checkpoint %s (run into the old file sink, the new root takes that sink over from query %s, its batches after the old ones)", rec.NewRoot, rec.OldQueryID),
		fmt.Sprintf("reconcile: the old output holds what %s committed; the new output starts at the boundary %s; compare the old root's last committed offsets (ckgate inspect %s) with the boundary: records between them are in neither output or in both; reconcile them before switching readers", rec.OldRoot, DescribeStart(rec.Boundary), rec.OldRoot),
		"switch the readers to the new output once reconciled, then retire the old output by policy (the old root and the archive " + rec.ArchivedTo + " are kept)",
	}
}

// DescribeStart says where a new root starts, in one line.
func DescribeStart(sp source.StartPoint) string {
	if f := sp.Files; f != nil {
		in := f.Path
		if in == "" {
			in = "the input"
		}
		switch {
		case f.ModifiedFrom != nil:
			return fmt.Sprintf("the files of %s modified at or after %s", in, f.ModifiedFrom.Format(time.RFC3339Nano))
		case f.FromLogOffset != nil:
			return fmt.Sprintf("the files of %s other than the %d the old file source log recorded up to log offset %d", in, len(f.Processed), *f.FromLogOffset)
		default:
			return fmt.Sprintf("the files of %s other than the %d named as processed", in, len(f.Processed))
		}
	}
	b, _ := json.Marshal(sp.Kafka)
	return string(b)
}

// KafkaOffsetsAfter returns, for every partition of topic, the offset of
// the first record at or after t (the end of the partition when none is):
// kadm's ListOffsetsAfterMilli.
func KafkaOffsetsAfter(ctx context.Context, brokers []string, topic string, t time.Time) (map[int32]int64, error) {
	if len(brokers) == 0 {
		return nil, errors.New("kafka offsets for a timestamp need the brokers")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DisableClientMetrics())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListOffsetsAfterMilli(ctx, t.UnixMilli(), topic)
	if err != nil {
		return nil, fmt.Errorf("kafka offsets of %s after %s: %w", topic, t.Format(time.RFC3339Nano), err)
	}
	if err := listed.Error(); err != nil {
		return nil, fmt.Errorf("kafka offsets of %s after %s: %w", topic, t.Format(time.RFC3339Nano), err)
	}
	parts := listed[topic]
	if len(parts) == 0 {
		return nil, fmt.Errorf("kafka topic %s: no partitions", topic)
	}
	out := map[int32]int64{}
	for _, p := range slices.Sorted(maps.Keys(parts)) {
		out[p] = parts[p].Offset
	}
	return out, nil
}
