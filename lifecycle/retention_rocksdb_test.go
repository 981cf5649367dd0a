package lifecycle_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/filetree"
	"github.com/ckgate/ckgate/lifecycle"
)

const sparkRocksAgg = "../testdata/spark/checkpoint-version-4.0.0/rocksdb/agg"

// rocksZip builds a RocksDB checkpoint zip whose metadata names ssts.
func rocksZip(t testing.TB, ssts ...string) []byte {
	t.Helper()
	var files []checkpoint.RocksDBFile
	for _, s := range ssts {
		files = append(files, checkpoint.RocksDBFile{LocalFileName: strings.SplitN(s, "-", 2)[0] + ".sst", DFSSstFileName: s, SizeBytes: 1})
	}
	meta, err := json.Marshal(checkpoint.RocksDBCheckpointMetadata{SSTFiles: files, NumKeys: int64(len(ssts))})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range map[string]string{"metadata": "v1\n" + string(meta), "CURRENT": "MANIFEST-000001\n"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t testing.TB, root, key string, data []byte) {
	t.Helper()
	if err := filetree.WriteFile(root, key, data); err != nil {
		t.Fatal(err)
	}
}

// TestPlanGoldenRocksDBSSTs pins the SST rule on Spark 4.0.0's RocksDB
// aggregation checkpoint, continued to batch 7 (a snapshot at version 6):
//
//   - state/0/1: 6.zip names 000015 (also in 4.zip) and a new 000022;
//     000008 is named only by the removed 2.zip and 4.zip and goes, as does
//     an orphan older than every kept zip; an SST newer than the oldest kept
//     zip that no zip names (an upload for a version being written) stays;
//   - state/0/2: its 6.zip does not decode: every SST of the directory stays
//     and the reason names the zip;
//   - state/0/3, 0/4: no 6.zip, so 4.zip is kept and so are its SSTs.
func TestPlanGoldenRocksDBSSTs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(dir, os.DirFS(sparkRocksAgg)); err != nil {
		t.Fatal(err)
	}
	offsets3, err := os.ReadFile(filepath.Join(dir, "offsets", "3"))
	if err != nil {
		t.Fatal(err)
	}
	commit3, err := os.ReadFile(filepath.Join(dir, "commits", "3"))
	if err != nil {
		t.Fatal(err)
	}
	young := map[string]bool{}
	add := func(key string, data []byte) {
		writeFile(t, dir, key, data)
		young[key] = true
	}
	for _, n := range []string{"4", "5", "6", "7"} {
		add("offsets/"+n, offsets3)
		add("commits/"+n, commit3)
	}
	cl, err := os.ReadFile(filepath.Join(dir, "state/0/1/4.changelog"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"5", "6", "7", "8"} {
		add("state/0/1/"+v+".changelog", cl)
	}
	add("state/0/1/6.zip", rocksZip(t, "000015-97d0e283-eed7-4af0-87d9-eded3afe15ca.sst", "000022-5d1f4b2c-0000-4000-8000-000000000022.sst"))
	add("state/0/1/SSTs/000022-5d1f4b2c-0000-4000-8000-000000000022.sst", []byte("sst"))
	add("state/0/1/SSTs/000030-in-flight-upload.sst", []byte("sst"))
	writeFile(t, dir, "state/0/1/SSTs/000003-orphan-of-a-failed-attempt.sst", []byte("sst"))
	add("state/0/2/6.zip", []byte("PK\x03\x04 not a zip"))
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := lifecycle.RetentionPolicy{MinBatches: 1, Now: retNow}
	l, err := lifecycle.ReadListing(context.Background(), st, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Zips) == 0 {
		t.Fatal("Read decoded no zip")
	}
	for i := range l.Objects {
		age := 30 * 24 * time.Hour
		if young[l.Objects[i].Key] {
			age = time.Hour
		}
		l.Objects[i].Modified = retNow.Add(-age)
		l.Objects[i].Version = ""
	}
	r, err := lifecycle.RetentionPlan(l, p)
	if err != nil {
		t.Fatal(err)
	}
	got := renderPlan(r)
	checkPlanGolden(t, "4.0.0-rocksdb-agg-continued-min1", got)
	wantActions(t, r, map[string]string{
		"state/0/1/SSTs/000008-e414df11-1a90-4be8-807c-8d6f970b5f56.sst": lifecycle.Remove,
		"state/0/1/SSTs/000003-orphan-of-a-failed-attempt.sst":           lifecycle.Remove,
		"state/0/1/SSTs/000015-97d0e283-eed7-4af0-87d9-eded3afe15ca.sst": lifecycle.Keep,
		"state/0/1/SSTs/000022-5d1f4b2c-0000-4000-8000-000000000022.sst": lifecycle.Keep,
		"state/0/1/SSTs/000030-in-flight-upload.sst":                     lifecycle.Keep,
		"state/0/1/4.zip": lifecycle.Remove,
		"state/0/1/6.zip": lifecycle.Keep,
		"state/0/2/SSTs/000008-d6862a4a-f10f-4641-ba89-0ea25cd816b0.sst": lifecycle.Keep,
		"state/0/3/SSTs/000008-637e442e-feb6-4022-a0b1-919d388073ae.sst": lifecycle.Keep,
	})
	if !strings.Contains(got, "state/0/2/6.zip could not be read") {
		t.Fatalf("the unreadable zip is not named:\n%s", got)
	}
	// Zips go before the SSTs they name (a crash in between leaves an
	// orphan SST, which the next plan removes, never a zip without its SST).
	last := map[string]int{}
	for i, d := range r.Remove {
		last[path.Base(path.Dir(d.Key))] = i
	}
	for i, d := range r.Remove {
		if strings.HasSuffix(d.Key, ".zip") && i > last["SSTs"] {
			t.Fatalf("zip %s is deleted after the SSTs", d.Key)
		}
	}
	// A zip the plan keeps that ReadListing did not decode keeps the SSTs too.
	delete(l.Zips, "state/0/1/6.zip")
	r, err = lifecycle.RetentionPlan(l, p)
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, r, map[string]string{"state/0/1/SSTs/000008-e414df11-1a90-4be8-807c-8d6f970b5f56.sst": lifecycle.Keep})
}

// FuzzDecodeZipRefs: any bytes decode to SST/log keys in the zip's own
// directory, or to an error naming the zip; never a panic. Seeds: Spark's
// own zips, a built one, truncations and garbage.
func FuzzDecodeZipRefs(f *testing.F) {
	for _, p := range []string{"state/0/1/2.zip", "state/0/1/4.zip", "state/0/4/4.zip"} {
		data, err := os.ReadFile(filepath.Join(sparkRocksAgg, filepath.FromSlash(p)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add(rocksZip(f, "000001-a.sst", "000002-b.sst"))
	f.Add(rocksZip(f, "../escape.sst"))
	f.Add([]byte("PK\x03\x04"))
	f.Add([]byte{})
	const key = "state/0/1/9.zip"
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := lifecycle.DecodeZipRefs(key, data)
		if err != nil {
			if !strings.Contains(err.Error(), key) {
				t.Fatalf("error does not name the zip: %v", err)
			}
			return
		}
		for _, k := range keys {
			rest, ok := strings.CutPrefix(k, "state/0/1/")
			if !ok || (!strings.HasPrefix(rest, "SSTs/") && !strings.HasPrefix(rest, "logs/")) || strings.Count(rest, "/") != 1 ||
				strings.HasSuffix(rest, "/..") || strings.HasSuffix(rest, "/.") {
				t.Fatalf("zip names %q outside its directory", k)
			}
		}
	})
}
