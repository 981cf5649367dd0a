package s3serve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/gateway/s3serve/s3atrace"
)

// secrets of testCreds by access key.
var secrets = map[string]string{"ORDERSJOB": "orders-secret-0123456789", "BILLINGJOB": "billing-secret-0123456789", "CLEANER": "cleaner-secret-0123456789"}

// sparkDriver is a Spark driver signing as key, writing the checkpoint at
// root of bucket "ckpt" with manager; process, when set, is its S3A audit
// referrer's process id.
func sparkDriver(endpoint, key, root string, m s3atrace.Manager, process string) *s3atrace.Driver {
	return &s3atrace.Driver{Client: client(endpoint, key, secrets[key]), Bucket: "ckpt", Root: root, Manager: m, Process: process}
}

// serveEachManager starts one server over a fresh local store (serve) and
// runs f on it once for each of Spark's file managers, a subtest each,
// with the checkpoint root name-<manager> of bucket "ckpt".
func serveEachManager(t *testing.T, name string, f func(t *testing.T, ep, dir string, m s3atrace.Manager, root string)) {
	t.Helper()
	ep, dir := serve(t)
	for _, m := range s3atrace.Managers {
		t.Run(m.String(), func(t *testing.T) { f(t, ep, dir, m, name+"-"+m.String()) })
	}
}

// inspectRoot inspects the checkpoint at root of bucket "ckpt" in the
// local store at dir with engine/checkpoint's reader (what `ckgate
// inspect` reports), the file sink at sink (when not "").
func inspectRoot(t *testing.T, dir, root, sink string) *checkpoint.Report {
	t.Helper()
	fs, err := filestore.New(filepath.Join(dir, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	opts := checkpoint.Options{}
	if sink != "" {
		opts.Sink = gateway.WithPrefix(fs, sink)
	}
	r, err := checkpoint.Inspect(context.Background(), gateway.WithPrefix(fs, root), opts)
	if err != nil {
		t.Fatalf("inspect %s: %v", root, err)
	}
	return r
}

// wantClean fails unless r is a clean checkpoint whose latest batch is last.
func wantClean(t *testing.T, r *checkpoint.Report, last int64) {
	t.Helper()
	for _, f := range r.Findings {
		if f.Severity == checkpoint.SeverityError {
			t.Errorf("finding %s %s: %s", f.ID, f.Key, f.Message)
		}
	}
	if r.Status != checkpoint.StatusClean || r.LatestOffsetsBatch == nil || *r.LatestOffsetsBatch != last ||
		r.LatestCommitBatch == nil || *r.LatestCommitBatch != last {
		t.Fatalf("status %s, latest offsets %v, commit %v; want clean at batch %d", r.Status, r.LatestOffsetsBatch, r.LatestCommitBatch, last)
	}
}

// rocksDBState is the RocksDB state store's files of every version, from
// partition 4 of Spark 4.0.0's RocksDB dedup checkpoint (testdata/spark):
// its two SSTs, uploaded by multipart, then <v>.zip naming them.
func rocksDBState(t *testing.T) func(p int, v int64) []s3atrace.File {
	t.Helper()
	f, err := s3atrace.RocksDBState(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestServeS3ATraceFullQuery replays 30 batches of a stateful query with a
// source log, a file sink (compacted every 10 batches) and
// minBatchesToRetain 10, for each of Spark's file managers, the HDFS state
// store under one manager and RocksDB's (SSTs by multipart upload) under
// the other: every request succeeds, no temp is left, and the checkpoint
// inspects clean at batch 29 with the query's id, the retained logs, and
// the sink's manifest holding every batch's file.
func TestServeS3ATraceFullQuery(t *testing.T) {
	ctx := context.Background()
	serveEachManager(t, "q", func(t *testing.T, ep, dir string, m s3atrace.Manager, root string) {
		d := sparkDriver(ep, "ORDERSJOB", root, m, s3atrace.UUID())
		d.Partitions, d.Source, d.Sink, d.MinBatchesToRetain = 2, true, "out-"+m.String(), 10
		if m == s3atrace.Abortable {
			d.State, d.Provider = rocksDBState(t), s3atrace.RocksDBProvider
		}
		steps := d.Query(30)
		if s3atrace.Count(steps, s3atrace.Multipart) == 0 && m == s3atrace.Abortable {
			t.Fatal("the RocksDB trace has no multipart upload")
		}
		if err := s3atrace.Run(ctx, steps); err != nil {
			t.Fatal(err)
		}
		r := inspectRoot(t, dir, root, d.Sink)
		wantClean(t, r, 29)
		if r.QueryID != d.QueryID {
			t.Errorf("query id %q, want %q", r.QueryID, d.QueryID)
		}
		if r.OffsetsLog.Count != 11 || r.CommitLog.Count != 11 {
			t.Errorf("offsets %d, commits %d entries; want the 11 minBatchesToRetain keeps", r.OffsetsLog.Count, r.CommitLog.Count)
		}
		fs, _ := filestore.New(filepath.Join(dir, "ckpt"))
		files, latest, err := checkpoint.ReadFileSinkLog(ctx, fs, d.Sink+"/_spark_metadata")
		if err != nil || latest != 29 || len(files) != 30 {
			t.Errorf("sink log: %d files up to batch %d, %v; want 30 up to 29", len(files), latest, err)
		}
		temps, _ := filepath.Glob(filepath.Join(dir, "ckpt", root, "*", ".*.tmp"))
		if len(temps) > 0 {
			t.Errorf("temps left: %v", temps)
		}
		if m == s3atrace.Abortable {
			if _, err := os.Stat(filepath.Join(dir, "ckpt", root, "state", "0", "1", "30.zip")); err != nil {
				t.Errorf("the last RocksDB version: %v", err)
			}
			if left := hiddenLeft(t, dir); len(left) != 0 {
				t.Errorf("multipart parts left: %v", left)
			}
		}
	})
}

// TestServeS3ATraceRacingDrivers: 16 drivers of one query (one access
// key, 16 processes) all probe offsets/0 absent and then write it at once,
// with each file manager: exactly one commits, every other gets 412
// PreconditionFailed on its COPY (the default manager) or its conditional
// PUT (Abortable), the error S3A raises and the losing query fails with;
// the winner's bytes are on the store and no temp is left.
func TestServeS3ATraceRacingDrivers(t *testing.T) {
	ctx := context.Background()
	serveEachManager(t, "race", func(t *testing.T, ep, dir string, m s3atrace.Manager, root string) {
		if err := s3atrace.Run(ctx, sparkDriver(ep, "ORDERSJOB", root, m, "").Start()); err != nil {
			t.Fatal(err)
		}
		const n = 16
		write := s3atrace.Copy
		if m == s3atrace.Abortable {
			write = s3atrace.Put
		}
		errs := make([]error, n)
		var probed, wg sync.WaitGroup
		probed.Add(n)
		for i := range n {
			d := sparkDriver(ep, "ORDERSJOB", root, m, s3atrace.UUID())
			d.Bodies.Offsets = func(int64) []byte {
				return fmt.Appendf(nil, "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n{\"writer\":%d}", i)
			}
			steps := group(d.Batch(0), root+"/offsets/0")
			at := slices.IndexFunc(steps, func(s s3atrace.Step) bool { return s.Kind == write })
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s3atrace.Run(ctx, steps[:at])
				probed.Done()
				probed.Wait() // every driver has seen offsets/0 absent
				if err == nil {
					err = s3atrace.Run(ctx, steps[at:])
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		won, err := s3atrace.Winner(errs)
		if err != nil {
			t.Fatalf("offsets/0: %v", err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "ckpt", root, "offsets", "0"))
		if err != nil || !strings.Contains(string(got), fmt.Sprintf(`{"writer":%d}`, won)) {
			t.Fatalf("offsets/0 = %q, %v; want the winner's (%d)", got, err, won)
		}
		// An unconditional overwrite of the entry is refused too.
		_, err = d0(ep, root).Client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("ckpt"), Key: aws.String(root + "/offsets/0"), Body: strings.NewReader("x")})
		if status(err) != http.StatusPreconditionFailed && status(err) != http.StatusForbidden {
			t.Fatalf("overwrite of offsets/0: %v (HTTP %d), want 412 or 403", err, status(err))
		}
		// A driver starting now sees it: Spark's FileAlreadyExistsException.
		if err := s3atrace.Run(ctx, sparkDriver(ep, "ORDERSJOB", root, m, "").Batch(0)); !errors.Is(err, s3atrace.ErrExists) {
			t.Fatalf("a late driver: %v, want %v", err, s3atrace.ErrExists)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "ckpt", root, "offsets", ".*.tmp")); len(left) > 0 {
			t.Fatalf("temps left: %v", left)
		}
	})
}

// group is the steps of steps that write key.
func group(steps []s3atrace.Step, key string) []s3atrace.Step {
	var out []s3atrace.Step
	for _, s := range steps {
		if s.Group == key {
			out = append(out, s)
		}
	}
	return out
}

// d0 is the orders job's driver on root (default file manager, no audit).
func d0(endpoint, root string) *s3atrace.Driver {
	return sparkDriver(endpoint, "ORDERSJOB", root, s3atrace.FileContext, "")
}

// TestServeS3ATraceSecondQuery: a second query's credentials on a root
// another query owns, with either file manager, restarting the way Spark
// does from what the root holds: its first write (the next offsets/N) is
// 403 AccessDenied naming CKG-P014, and nothing of it lands.
func TestServeS3ATraceSecondQuery(t *testing.T) {
	ctx := context.Background()
	serveEachManager(t, "owned", func(t *testing.T, ep, dir string, m s3atrace.Manager, root string) {
		owner := sparkDriver(ep, "ORDERSJOB", root, m, "")
		owner.Partitions = 1
		if err := s3atrace.Run(ctx, owner.Query(2)); err != nil {
			t.Fatal(err)
		}
		other := sparkDriver(ep, "BILLINGJOB", root, m, "")
		other.Partitions = 1
		steps, err := other.Resume(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		err = s3atrace.Run(ctx, steps)
		wantOwnerRefusal(t, "second query's batch 2", err)
		if !strings.Contains(err.Error(), root+"/offsets/") {
			t.Errorf("refused at %v; want its offsets/2", err)
		}
		wantClean(t, inspectRoot(t, dir, root, ""), 1)
		if left, _ := filepath.Glob(filepath.Join(dir, "ckpt", root, "offsets", ".*")); len(left) > 0 {
			t.Errorf("the refused query left %v", left)
		}
	})
}

// TestServeS3ATraceMultipartSST: a RocksDB version whose SST is uploaded
// in three parts (5 MiB, 5 MiB, 1 MiB) then its zip, under the default
// file manager: the SST on the store is the bytes uploaded, no part is
// left, and the zip is published after it.
func TestServeS3ATraceMultipartSST(t *testing.T) {
	ep, dir := serve(t)
	ctx := context.Background()
	sst := randomBytes(t, 11<<20)
	d := d0(ep, "rocks")
	d.Partitions, d.PartSize, d.Provider = 1, 5<<20, s3atrace.RocksDBProvider
	d.State = func(_ int, v int64) []s3atrace.File {
		return []s3atrace.File{{Name: "SSTs/000012-big.sst", Data: sst}, {Name: fmt.Sprintf("%d.zip", v), Data: []byte("zip")}}
	}
	steps := d.Query(1)
	if s3atrace.Count(steps, s3atrace.Multipart) != 1 || s3atrace.Count(steps, s3atrace.Complete) != 1 {
		t.Fatalf("trace has %d multipart uploads", s3atrace.Count(steps, s3atrace.Multipart))
	}
	if err := s3atrace.Run(ctx, steps); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "ckpt", "rocks", "state", "0", "0", "SSTs", "000012-big.sst"))
	if err != nil || !bytes.Equal(got, sst) {
		t.Fatalf("SST on the store: %d bytes, %v; want the %d uploaded", len(got), err, len(sst))
	}
	if _, err := os.Stat(filepath.Join(dir, "ckpt", "rocks", "state", "0", "0", "1.zip")); err != nil {
		t.Fatal(err)
	}
	if left := hiddenLeft(t, dir); len(left) != 0 {
		t.Fatalf("parts left: %v", left)
	}
	lp, err := d.Client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("ckpt")})
	if err != nil || len(lp.Uploads) != 0 {
		t.Fatalf("uploads pending: %+v, %v", lp, err)
	}
}
