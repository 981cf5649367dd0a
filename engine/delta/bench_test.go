package delta

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
)

const (
	benchVersions = 10000
	benchInterval = 10  // a classic checkpoint every 10 commits, Delta's default
	benchLive     = 100 // live files: each commit adds one and removes the one added 100 versions before
	benchTomb     = 10  // tombstones a checkpoint keeps (older ones expired)
)

// buildBenchTable writes a 10,000-version table into s: commits as a
// stream writes them (commitInfo, add, remove, txn), a classic checkpoint
// (written with parquet-go, in Delta's checkpoint schema) and
// _last_checkpoint every 10 commits, and the data files of the live
// snapshot. It returns the table id.
func buildBenchTable(b *testing.B, s gateway.Store) string {
	b.Helper()
	ctx := context.Background()
	const id = "bench-table-0000-4000-8000-000000000000"
	proto := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	meta := Metadata{ID: id, Format: Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{}, Configuration: map[string]string{}}
	file := func(v int64) string { return fmt.Sprintf("part-%05d-c000.snappy.parquet", v) }
	type obj struct {
		key  string
		data []byte
	}
	objs := make(chan obj, 64)
	g, gctx := errgroup.WithContext(ctx)
	for range 16 {
		g.Go(func() error {
			for o := range objs {
				if _, err := s.Put(gctx, o.key, o.data, gateway.IfAbsent()); err != nil {
					return err
				}
			}
			return nil
		})
	}
	live := map[string]Add{}
	var tombs []Remove
	now := time.Now().UnixMilli()
	for v := int64(0); v < benchVersions; v++ {
		acts := []Action{{CommitInfo: &CommitInfo{Timestamp: now, Operation: OperationStreamingUpdate}}}
		if v == 0 {
			acts = append(acts, Action{Protocol: &proto}, Action{MetaData: &meta})
		}
		add := Add{Path: file(v), PartitionValues: map[string]string{}, Size: 400, ModificationTime: now, DataChange: true}
		acts = append(acts, Action{Add: &add}, Action{Txn: &Txn{AppID: "bench-query", Version: v}})
		live[add.Path] = add
		if v >= benchLive {
			ts := now
			r := Remove{Path: file(v - benchLive), DeletionTimestamp: &ts, DataChange: true}
			acts = append(acts, Action{Remove: &r})
			delete(live, r.Path)
			tombs = append(tombs, r)
			if len(tombs) > benchTomb {
				tombs = tombs[1:]
			}
		}
		data, err := MarshalCommit(acts)
		if err != nil {
			b.Fatal(err)
		}
		objs <- obj{CommitKey(v), data}
		if v > 0 && v%benchInterval == 0 {
			cp := []Action{{Protocol: &proto}, {MetaData: &meta}, {Txn: &Txn{AppID: "bench-query", Version: v}}}
			for _, a := range live {
				cp = append(cp, Action{Add: &a})
			}
			for i := range tombs {
				cp = append(cp, Action{Remove: &tombs[i]})
			}
			pq, err := MarshalCheckpointParquet(cp)
			if err != nil {
				b.Fatal(err)
			}
			objs <- obj{CheckpointKey(v), pq}
		}
	}
	for p := range live {
		objs <- obj{p, []byte("PAR1")}
	}
	close(objs)
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	lc, _ := LastCheckpoint{Version: benchVersions - 1 - (benchVersions-1)%benchInterval, Size: benchLive + benchTomb + 3}.Marshal()
	if _, err := s.Put(ctx, LastCheckpointKey, lc, gateway.IfAbsent()); err != nil {
		b.Fatal(err)
	}
	return id
}

// benchGap times CheckResume of a stream 9 versions behind the latest (a
// stream that stopped a little while ago), from opening the table.
func benchGap(b *testing.B, s gateway.Store, id string) time.Duration {
	b.Helper()
	total := timeOpened(b, s, func(ctx context.Context, t *Table) (*ResumeReport, error) {
		return t.CheckResume(ctx, Position{TableID: id, Version: benchVersions - 9, Index: -1})
	}, func(r *ResumeReport) {
		if r.Status != ResumeOK || r.LatestVersion != benchVersions-1 || r.FilesChecked != 9 {
			b.Fatalf("gap on the bench table: %+v", r)
		}
	})
	return total / time.Duration(b.N)
}

// timeOpened opens the table on s and runs op on it b.N times and returns
// the total time that took; check asserts on each answer of op, untimed.
func timeOpened[R any](b *testing.B, s gateway.Store, op func(context.Context, *Table) (R, error), check func(R)) time.Duration {
	b.Helper()
	ctx := context.Background()
	var total time.Duration
	for range b.N {
		start := time.Now()
		t, err := Open(ctx, s, "")
		if err != nil {
			b.Fatal(err)
		}
		r, err := op(ctx, t)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		check(r)
	}
	return total
}

func BenchmarkDeltaSnapshot10k(b *testing.B) {
	s := fileStore(b, b.TempDir())
	id := buildBenchTable(b, s)
	b.ResetTimer()
	total := timeOpened(b, s, func(ctx context.Context, t *Table) (*Snapshot, error) {
		return t.Snapshot(ctx, -1)
	}, func(snap *Snapshot) {
		if snap.Version != benchVersions-1 || len(snap.Files) != benchLive || snap.Metadata.ID != id || snap.Base == nil {
			b.Fatalf("snapshot: v%d %d files base %+v", snap.Version, len(snap.Files), snap.Base)
		}
		if v, _ := snap.TxnVersion("bench-query"); v != benchVersions-1 {
			b.Fatalf("txn %d", v)
		}
	})
	d := benchGap(b, s, id)
	benchsum.Record(b, "delta_snapshot_10k_versions_local_ms", float64(total.Microseconds())/1000/float64(b.N), "ms", "<1000")
	benchsum.Record(b, "delta_gap_10k_versions_local_ms", float64(d.Microseconds())/1000, "ms", "<1000")
}

func BenchmarkDeltaGap10kS3(b *testing.B) {
	ctx := context.Background()
	emu := emulator.Versitygw(b)
	q := url.Values{"endpoint": {emu.Endpoint}, "path_style": {"true"}, "region": {emu.Region}}.Encode()
	s, err := stores.Open(ctx, "s3://ckgate-delta-"+strings.ToLower(rand.Text()[:10])+"/table?"+q)
	if err != nil {
		b.Fatal(err)
	}
	defer gateway.Close(s)
	if err := gateway.MakeBucket(ctx, s); err != nil {
		b.Fatal(err)
	}
	id := buildBenchTable(b, s)
	b.ResetTimer()
	d := benchGap(b, s, id)
	benchsum.Record(b, "delta_gap_10k_versions_s3_ms", float64(d.Microseconds())/1000, "ms", "<3000")
}
