package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// store rm and put --overwrite go through the policy: inside a checkpoint
// root (a Spark checkpoint copied from testdata, the bucket holding it one
// level up) housekeeping and admin without a reason delete nothing and no
// one replaces a log entry; an admin's stated reason breaks glass only with
// a decision log, which records it; outside any checkpoint root, rm works.
func TestStoreWritesAreDecided(t *testing.T) {
	ck := copyTree(t, "checkpoint-version-2.1.0")
	bucket := filepath.Dir(ck)
	os.WriteFile(filepath.Join(bucket, "scratch.txt"), []byte("x"), 0o644)
	data := writeFile(t, "replacement")

	ckgate(t, Options{}, "", "store", "rm", "--kind", "housekeeping", bucket, "ckpt/offsets/0").wantErr(t, 4, "CKG-P004", "ckpt/offsets/0")
	ckgate(t, Options{}, "", "store", "rm", bucket, "ckpt/state/0/0/1.delta").wantErr(t, 4, "CKG-P004")
	ckgate(t, Options{}, "", "store", "rm", ck, "offsets/1").wantErr(t, 4, "CKG-P004") // at the root itself
	ckgate(t, Options{}, "", "store", "put", "--overwrite", "--kind", "job", data, ck, "offsets/1").wantErr(t, 4, "CKG-P003")
	ckgate(t, Options{}, "", "store", "rm", "--reason", "INC-42 restore", bucket, "ckpt/offsets/1").wantErr(t, 4, "decision log")
	for _, k := range []string{"offsets/0", "offsets/1", "state/0/0/1.delta"} {
		if _, err := os.Stat(filepath.Join(ck, k)); err != nil {
			t.Fatalf("%s removed by a refused rm: %v", k, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(ck, "offsets", "1"))
	if string(b) == "replacement" {
		t.Fatal("offsets/1 replaced by a refused put")
	}

	dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
	ckgate(t, Options{}, "", "store", "rm", "--reason", "INC-42 restore", "--decision-log", dlog, bucket, "ckpt/offsets/1").want(t, 0, "removed")
	rec, _ := os.ReadFile(dlog)
	for _, want := range []string{`"break_glass":true`, "INC-42 restore", "CKG-P004"} {
		if !strings.Contains(string(rec), want) {
			t.Fatalf("decision log lacks %s:\n%s", want, rec)
		}
	}
	ckgate(t, Options{}, "", "store", "rm", "--kind", "housekeeping", bucket, "scratch.txt").want(t, 0, "removed")
	ckgate(t, Options{}, "", "store", "rm", "--kind", "nobody", bucket, "scratch.txt").wantErr(t, 2, "--kind")
}
