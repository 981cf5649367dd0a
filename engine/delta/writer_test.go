package delta_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/delta"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/stores"
	"github.com/ckgate/ckgate/internal/emulator"
)

// appendAs appends batches 0..n-1 as app to the table in s, each batch
// one data file named by app and batch.
func appendAs(ctx context.Context, s gateway.Store, app string, n int, start <-chan struct{}) error {
	w, err := delta.OpenWriter(ctx, s, app, nil)
	if err != nil {
		return err
	}
	<-start
	for b := range int64(n) {
		prepare := func(ctx context.Context, md *delta.Metadata) ([]delta.Add, error) {
			name := fmt.Sprintf("part-%s-%d-%s.parquet", app, b, delta.NewUUID())
			data := []byte(app + fmt.Sprint(b))
			if _, err := s.Put(ctx, name, data, gateway.IfAbsent()); err != nil {
				return nil, err
			}
			return []delta.Add{{Path: name, PartitionValues: map[string]string{}, Size: int64(len(data)), DataChange: true}}, nil
		}
		create := delta.NewMetadata(`{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}`, time.Now())
		if _, err := w.Append(ctx, b, create, prepare); err != nil {
			return fmt.Errorf("%s batch %d: %w", app, b, err)
		}
	}
	return nil
}

// checkLog checks what concurrent blind appends must leave: versions
// 0..n-1 contiguous, one metaData (the winner of version 0) and one
// protocol, each (app, batch) committed exactly once, and the snapshot
// (from the newest checkpoint) equal to the JSON replay.
func checkLog(t *testing.T, s gateway.Store, apps, batches int) {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	n := int64(apps * batches)
	l := tb.Log()
	if len(l.Commits) != int(n) || l.Latest() != n-1 || l.EarliestReplayable() != 0 {
		t.Fatalf("commits %v, want versions 0..%d contiguous", l.Commits, n-1)
	}
	seen := map[string]int64{}
	metas, protocols := 0, 0
	files := map[string]bool{}
	for v := range n {
		acts, err := delta.ReadCommit(ctx, s, v)
		if err != nil {
			t.Fatal(err)
		}
		txns := 0
		for _, a := range acts {
			switch {
			case a.Txn != nil:
				txns++
				k := fmt.Sprintf("%s/%d", a.Txn.AppID, a.Txn.Version)
				if old, dup := seen[k]; dup {
					t.Fatalf("batch %s committed twice: versions %d and %d", k, old, v)
				}
				seen[k] = v
			case a.MetaData != nil:
				metas++
			case a.Protocol != nil:
				protocols++
			case a.Add != nil:
				files[a.Add.Path] = true
			case a.CommitInfo != nil:
				if a.CommitInfo.Operation != delta.OperationStreamingUpdate {
					t.Fatalf("version %d: operation %q", v, a.CommitInfo.Operation)
				}
			}
		}
		if txns != 1 {
			t.Fatalf("version %d has %d txn actions", v, txns)
		}
	}
	if metas != 1 || protocols != 1 || len(seen) != int(n) {
		t.Fatalf("%d metaData, %d protocol actions, %d batches (want 1, 1, %d)", metas, protocols, len(seen), n)
	}
	snap, err := tb.Snapshot(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Base == nil || snap.Base.Version != (n-1)/delta.CheckpointInterval*delta.CheckpointInterval {
		t.Fatalf("the snapshot did not start from the newest checkpoint: base %+v", snap.Base)
	}
	if len(snap.Files) != len(files) {
		t.Fatalf("the snapshot from the checkpoint has %d files, the JSON replay %d", len(snap.Files), len(files))
	}
	for _, f := range snap.Files {
		if !files[f.Path] {
			t.Fatalf("the checkpoint names %s, which no commit adds", f.Path)
		}
	}
	for i := range apps {
		if v, ok := snap.TxnVersion(fmt.Sprintf("app-%d", i)); !ok || v != int64(batches-1) {
			t.Fatalf("txn of app-%d is %d (%v), want %d", i, v, ok, batches-1)
		}
	}
}

// concurrentAppends runs 8 writers (8 queries) appending 5 batches each
// to one new table at the same time.
func concurrentAppends(t *testing.T, s gateway.Store) {
	const apps, batches = 8, 5
	ctx := context.Background()
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, apps)
	for i := range apps {
		wg.Go(func() { errs[i] = appendAs(ctx, s, fmt.Sprintf("app-%d", i), batches, start) })
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkLog(t, s, apps, batches)
}

// TestConcurrentWritersLocal: 8 writers on the local disk, no lock
// service: versions contiguous, no version written twice, no batch lost
// or committed twice.
func TestConcurrentWritersLocal(t *testing.T) {
	s, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	concurrentAppends(t, s)
}

// TestConcurrentWritersS3: the same on S3 (versitygw): create-only PUTs
// (If-None-Match: *) are the only arbiter.
func TestConcurrentWritersS3(t *testing.T) {
	emu := emulator.Versitygw(t)
	concurrentAppends(t, openEmulated(t, fmt.Sprintf("s3://ckgate-delta-%d/table?region=%s&endpoint=%s&path_style=true", os.Getpid(), emu.Region, emu.Endpoint)))
}

// TestWriterSkipsCommittedBatch: a batch the table's txn holds for the
// app (an earlier attempt, a zombie) is skipped, also when the writer
// learns it only by losing the race for the version.
func TestWriterSkipsCommittedBatch(t *testing.T) {
	ctx := context.Background()
	s, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	close(start)
	if err := appendAs(ctx, s, "q", 2, start); err != nil {
		t.Fatal(err)
	}
	// a writer opened before batch 1 committed (a zombie's view)
	stale, err := delta.OpenWriter(ctx, s, "q", nil)
	if err != nil {
		t.Fatal(err)
	}
	if stale.TxnVersion() != 1 {
		t.Fatalf("txn %d, want 1", stale.TxnVersion())
	}
	prepared := 0
	prepare := func(context.Context, *delta.Metadata) ([]delta.Add, error) { prepared++; return nil, nil }
	res, err := stale.Append(ctx, 1, nil, prepare)
	if err != nil || !res.Skipped || prepared != 0 {
		t.Fatalf("re-run of batch 1: %+v %v (prepared %d)", res, err, prepared)
	}
	// another writer of the same app commits batch 2 behind its back
	other, _ := delta.OpenWriter(ctx, s, "q", nil)
	if _, err := other.Append(ctx, 2, nil, prepare); err != nil {
		t.Fatal(err)
	}
	res, err = stale.Append(ctx, 2, nil, prepare)
	if err != nil || !res.Skipped || stale.Retries != 1 {
		t.Fatalf("batch 2 after losing the race to its own commit: %+v %v (retries %d)", res, err, stale.Retries)
	}
	tb, _ := delta.Open(ctx, s, "")
	if tb.Log().Latest() != 2 {
		t.Fatalf("latest %d, want 2: a skipped batch committed", tb.Log().Latest())
	}
}

// openEmulated opens raw (a store URL on an emulator) and makes its bucket.
func openEmulated(t *testing.T, raw string) gateway.Store {
	t.Helper()
	ctx := context.Background()
	s, err := stores.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gateway.Close(s) })
	if err := gateway.MakeBucket(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConcurrentWritersGCS: the same on GCS (fake-gcs-server): the
// DoesNotExist precondition is the only arbiter.
func TestConcurrentWritersGCS(t *testing.T) {
	emu := emulator.FakeGCS(t)
	t.Setenv("STORAGE_EMULATOR_HOST", emu.Host)
	concurrentAppends(t, openEmulated(t, fmt.Sprintf("gs://ckgate-delta-%d/table", os.Getpid())))
}

// TestConcurrentWritersAzure: the same on Azure Blob (Azurite):
// If-None-Match: * is the only arbiter.
func TestConcurrentWritersAzure(t *testing.T) {
	emu := emulator.Azurite(t)
	concurrentAppends(t, openEmulated(t, fmt.Sprintf("az://%s/ckgate-delta-%d/table?endpoint=%s", emu.Account, os.Getpid(), emu.ServiceURL)))
}

// TestWriterRefusesWriterFeatures: a table whose protocol needs writer
// features (here Delta's own deletion-vector table, writer version 7) is
// refused at open, naming the version, rather than appended to without
// honouring them.
func TestWriterRefusesWriterFeatures(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/delta/dv-partitioned-with-checkpoint")); err != nil {
		t.Fatal(err)
	}
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = delta.OpenWriter(context.Background(), s, "q", nil)
	if !errors.Is(err, delta.ErrUnsupportedProtocol) || !strings.Contains(err.Error(), "writer version 7") {
		t.Fatalf("open a writer on a writer-version-7 table: %v", err)
	}
}
