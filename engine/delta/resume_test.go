package delta

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

const (
	protoLine = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
	schema    = `{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}`
)

func metaLine(id string) string {
	return `{"metaData":{"id":"` + id + `","format":{"provider":"parquet","options":{}},"schemaString":"` + schema + `","partitionColumns":[],"configuration":{},"createdTime":1}}`
}

func addLine(path string) string {
	return `{"add":{"path":"` + path + `","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`
}

func removeLine(path string, at int64) string {
	return fmt.Sprintf(`{"remove":{"path":"%s","deletionTimestamp":%d,"dataChange":true}}`, path, at)
}

func putData(t *testing.T, s gateway.Store, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := s.Put(context.Background(), k, []byte("data"), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
}

// streamTable is a table of n versions, each adding part-<v>.parquet (with
// its data file), version 0 setting the protocol and id.
func streamTable(t *testing.T, n int, id string) gateway.Store {
	t.Helper()
	s := memstore.New()
	for v := int64(0); v < int64(n); v++ {
		f := fmt.Sprintf("part-%05d.parquet", v)
		if v == 0 {
			putCommit(t, s, v, protoLine, metaLine(id), addLine(f))
		} else {
			putCommit(t, s, v, `{"commitInfo":{"operation":"WRITE"}}`, addLine(f))
		}
		putData(t, s, f)
	}
	return s
}

func checkResume(t *testing.T, s gateway.Store, p Position) *ResumeReport {
	t.Helper()
	r, err := openTable(t, s, "").CheckResume(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResumeOKAndAhead(t *testing.T) {
	s := streamTable(t, 5, "table-a")
	for _, p := range []Position{
		{TableID: "table-a", Version: 0, Index: -1},
		{TableID: "table-a", Version: 3, Index: 0},
		{TableID: "table-a", Version: 5, Index: -1}, // consumed all of 4: latest+1
		{TableID: "table-a", Version: 4, Index: -1, IsStartingVersion: true},
	} {
		if r := checkResume(t, s, p); r.Status != ResumeOK || r.LatestVersion != 4 || r.EarliestVersion != 0 || len(r.MissingFiles) != 0 {
			t.Errorf("%+v: %+v", p, r)
		}
	}
	r := checkResume(t, s, Position{TableID: "table-a", Version: 6, Index: -1})
	if r.Status != ResumeAhead || !strings.Contains(r.Reason, "latest version is 4") {
		t.Errorf("version 6 of a 5-version table: %+v", r)
	}
}

// CREATE OR REPLACE writes a new id into the same log: the resume names
// both ids and the version that changed it.
func TestResumeIdentityChanged(t *testing.T) {
	s := streamTable(t, 3, "old-id")
	putCommit(t, s, 3, protoLine, metaLine("new-id"), removeLine("part-00000.parquet", 5), addLine("part-new.parquet"))
	putCommit(t, s, 4, addLine("part-new2.parquet"))
	putCommit(t, s, 5, metaLine("new-id")) // a schema change keeps the id
	r := checkResume(t, s, Position{TableID: "old-id", Version: 2, Index: -1})
	if r.Status != ResumeIdentityChanged || r.TableID != "new-id" || r.CheckpointID != "old-id" || r.IDChangedAt == nil || *r.IDChangedAt != 3 {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Reason, "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE") {
		t.Errorf("reason %q does not name Spark's error", r.Reason)
	}
	h, err := openTable(t, s, "").IDHistory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0] != (IDChange{0, "old-id"}) || h[1] != (IDChange{3, "new-id"}) {
		t.Errorf("id history = %+v", h)
	}
	// a different table that never changed its id: no change version
	other := streamTable(t, 2, "third-id")
	if r := checkResume(t, other, Position{TableID: "old-id", Version: 1, Index: -1}); r.Status != ResumeIdentityChanged || r.IDChangedAt != nil {
		t.Errorf("%+v", r)
	}
}

// Log cleanup removed commits 0..9 after the checkpoint at 10: a stream at
// 5 has a gap, one at 12 does not, and a starting stream can begin at 10.
func TestResumeLogCleanedUp(t *testing.T) {
	ctx := context.Background()
	s := streamTable(t, 15, "t")
	snap, err := openTable(t, s, "").Snapshot(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	acts := []Action{{Protocol: &snap.Protocol}, {MetaData: &snap.Metadata}}
	for i := range snap.Files {
		acts = append(acts, Action{Add: &snap.Files[i]})
	}
	cp, err := MarshalCheckpointParquet(acts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, CheckpointKey(10), cp, gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v < 10; v++ {
		if err := s.Delete(ctx, CommitKey(v), gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
	tb := openTable(t, s, "")
	got, err := tb.Snapshot(ctx, -1)
	if err != nil || got.Version != 14 || len(got.Files) != 15 || got.Base == nil || got.Base.Version != 10 {
		t.Fatalf("snapshot after cleanup: %+v, %v", got, err)
	}
	if _, err := tb.Snapshot(ctx, 5); !errors.Is(err, ErrLogGap) {
		t.Errorf("snapshot at a cleaned-up version: %v", err)
	}
	r := checkResume(t, s, Position{TableID: "t", Version: 5, Index: -1})
	if r.Status != ResumeGap || r.MissingVersions == nil || *r.MissingVersions != [2]int64{5, 9} || r.EarliestVersion != 10 {
		t.Errorf("resume at 5: %+v", r)
	}
	if r := checkResume(t, s, Position{TableID: "t", Version: 12, Index: -1}); r.Status != ResumeOK || r.FilesChecked != 3 {
		t.Errorf("resume at 12: %+v", r)
	}
	r = checkResume(t, s, Position{TableID: "t", Version: 7, Index: -1, IsStartingVersion: true})
	if r.Status != ResumeGap || r.EarliestVersion != 10 {
		t.Errorf("starting at 7: %+v", r)
	}
	if r := checkResume(t, s, Position{TableID: "t", Version: 10, Index: 4, IsStartingVersion: true}); r.Status != ResumeOK || r.FilesChecked != 11-5+4 {
		t.Errorf("starting at 10 after 5 files: %+v", r)
	}
}

// snapshot-vacuumed: VACUUM with 0 h retention left only the latest
// snapshot's files, so a stream from version 4 misses the file added at 4.
func TestResumeVacuumedRealTable(t *testing.T) {
	s := fileStore(t, filepath.Join(realTables, "snapshot-vacuumed"))
	id := "93351cf1-c931-4326-88f0-d10e29e71b21"
	if r := checkResume(t, s, Position{TableID: id, Version: 5, Index: -1}); r.Status != ResumeOK || r.FilesChecked != 0 { // version 5 rewrote with dataChange=false: a stream reads nothing of it
		t.Errorf("resume at 5: %+v", r)
	}
	r := checkResume(t, s, Position{TableID: id, Version: 4, Index: -1})
	if r.Status != ResumeGap || len(r.MissingFiles) != 1 || r.Missing[0] != (MissingFile{"part-00000-d83dafd8-c344-49f0-ab1c-acd944e32493-c000.snappy.parquet", 4}) || r.EarliestVersion != 5 {
		t.Errorf("resume at 4: %+v", r)
	}
	if r := checkResume(t, s, Position{TableID: id, Version: 0, Index: -1}); r.Status != ResumeGap || len(r.MissingFiles) < 5 || r.EarliestVersion != 5 {
		t.Errorf("resume at 0: %+v", r)
	}
	// the checkpoint table's adds are placeholders: every one is missing
	r = checkResume(t, fileStore(t, filepath.Join(realTables, "checkpoint")), Position{TableID: "testId", Version: 14, Index: -1, IsStartingVersion: true})
	if r.Status != ResumeGap || len(r.MissingFiles) != 1 {
		t.Errorf("checkpoint table: %+v", r)
	}
}

// A deletion vector file is part of what a resume needs.
func TestResumeMissingDeletionVector(t *testing.T) {
	ctx := context.Background()
	s, _ := copyTable(t, "dv-partitioned-with-checkpoint")
	if r := checkResume(t, s, Position{TableID: "testId", Version: 15, Index: -1, IsStartingVersion: true}); r.Status != ResumeOK {
		t.Fatalf("intact table: %+v", r)
	}
	dv := "deletion_vector_be3f06b1-59b3-4537-b5de-554c3bb2fad9.bin" // named by add part=0/part-00000-8387… at version 6
	if err := s.Delete(ctx, dv, gateway.None()); err != nil {
		t.Fatal(err)
	}
	r := checkResume(t, s, Position{TableID: "testId", Version: 6, Index: -1})
	if r.Status != ResumeGap || len(r.MissingFiles) != 1 || r.MissingFiles[0] != dv || r.Missing[0].Version != 6 {
		t.Errorf("%+v", r)
	}
}

func TestResumeCatalogManaged(t *testing.T) {
	s := memstore.New()
	putCommit(t, s, 0, `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["catalogManaged"],"writerFeatures":["catalogManaged"]}}`, metaLine("t"))
	r := checkResume(t, s, Position{TableID: "t", Version: 0, Index: -1})
	if r.Status != ResumeCatalogManaged || !strings.Contains(r.Reason, "catalog") {
		t.Errorf("%+v", r)
	}
	_, err := openTable(t, s, "").Snapshot(context.Background(), -1)
	if !errors.Is(err, ErrCatalogManaged) || !errors.Is(err, ErrUnsupportedProtocol) {
		t.Errorf("snapshot: %v", err)
	}
}

// Absolute add paths inside the table resolve to keys; outside it they are
// reported unchecked, never probed under a wrong key.
func TestResumeAbsolutePaths(t *testing.T) {
	dir := t.TempDir()
	s := fileStore(t, dir)
	putCommit(t, s, 0, protoLine, metaLine("t"), addLine("file:"+dir+"/a%20b.parquet"), addLine("s3a://elsewhere/x.parquet"), addLine("sub/c%3Dd.parquet"))
	putData(t, s, "a b.parquet", "sub/c=d.parquet")
	tb := openTable(t, s, dir)
	r, err := tb.CheckResume(context.Background(), Position{TableID: "t", Version: 0, Index: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != ResumeOK || r.FilesChecked != 2 || len(r.Unchecked) != 1 || r.Unchecked[0] != "s3a://elsewhere/x.parquet" {
		t.Errorf("%+v", r)
	}
}

func TestAddedFrom(t *testing.T) {
	ctx := context.Background()
	tb := openTable(t, fileStore(t, filepath.Join(realTables, "snapshot-vacuumed")), "")
	got, err := tb.AddedFrom(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	// version 4 adds one file; version 5 rewrote with dataChange=false
	if len(got) != 1 || got[0].Version != 4 || got[0].Add.Path != "part-00000-d83dafd8-c344-49f0-ab1c-acd944e32493-c000.snappy.parquet" {
		t.Errorf("%+v", got)
	}
	tb = openTable(t, fileStore(t, filepath.Join(realTables, "versions-not-contiguous")), "")
	if _, err := tb.AddedFrom(ctx, 0); !errors.Is(err, ErrLogGap) {
		t.Errorf("from 0 over a gap: %v", err)
	}
	if got, err := tb.AddedFrom(ctx, 2); err != nil || len(got) != 1 || got[0].Add.Path != "foo" {
		t.Errorf("from 2: %+v, %v", got, err)
	}
}
