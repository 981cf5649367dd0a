package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// The hostile-input suite: every way of spelling, aliasing or damaging a
// checkpoint's location that an attacker with ordinary `ckgate store`,
// `run`, `retention` and `archive` commands can try. Each attempt is
// refused (exit 2, 3 or 4) and the protected files are untouched.

// hostileCheckpoint lays out a checkpoint at BASE/x/ck: metadata, batches 0
// to 2 in offsets, 0 and 1 committed (2 in flight), a source log and state.
func hostileCheckpoint(t *testing.T) (base, ck string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ck = filepath.Join(base, "x", "ck")
	files := map[string]string{
		"metadata":          `{"id":"0b7f6f0c-6d3c-4f5e-9d7a-2f0c8c1d9e01"}`,
		"offsets/0":         "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1}\n{\"logOffset\":0}",
		"offsets/1":         "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":2}\n{\"logOffset\":1}",
		"offsets/2":         "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":3}\n{\"logOffset\":2}",
		"commits/0":         "v1\n{\"nextBatchWatermarkMs\":0}",
		"commits/1":         "v1\n{\"nextBatchWatermarkMs\":0}",
		"sources/0/0":       "v1\n{\"path\":\"file:///in/a\",\"timestamp\":1,\"batchId\":0}",
		"state/0/0/1.delta": "state",
	}
	for k, v := range files {
		p := filepath.Join(ck, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base, ck
}

// treeContents maps every file below dir to its content.
func treeContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
			return nil
		}
		if !d.Type().IsRegular() {
			out[rel] = d.Type().String() // a FIFO is not opened
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

// refused runs args and wants a refusal (exit 2, 3 or 4) that leaves the
// checkpoint ck as it was.
func refused(t *testing.T, ck, stdin string, args ...string) {
	t.Helper()
	refusedOn(t, func() map[string]string { return treeContents(t, ck) }, stdin, args...)
}

// refusedOn runs args and wants a refusal that leaves what snapshot sees
// as it was.
func refusedOn(t *testing.T, snapshot func() map[string]string, stdin string, args ...string) {
	t.Helper()
	before := snapshot()
	r := ckgate(t, Options{}, stdin, args...)
	if r.code != ExitUsage && r.code != 3 && r.code != 4 {
		t.Fatalf("%v: exit %d, want a refusal (2, 3 or 4)\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	if after := snapshot(); !maps.Equal(before, after) {
		t.Fatalf("%v was refused (exit %d) but changed the checkpoint:\nbefore %v\nafter  %v", args, r.code, before, after)
	}
}

var housekeeping = []string{"--kind", "housekeeping", "--principal", "cron"}

// attack tries to delete and to overwrite key under root as housekeeping.
func attack(t *testing.T, ck, root, key string) {
	t.Helper()
	refused(t, ck, "", append(append([]string{"store", "rm"}, housekeeping...), root, key)...)
	refused(t, ck, "PWNED", append(append([]string{"store", "put", "--overwrite"}, housekeeping...), "-", root, key)...)
}

// Class 1: the root spelled as the file system root, in every way, with
// the key naming the whole path.
func TestHostileRootSpellings(t *testing.T) {
	base, ck := hostileCheckpoint(t)
	rel := strings.TrimPrefix(filepath.ToSlash(ck), "/")
	for _, root := range []string{"/", "//", "/.", "/tmp/..", "file:///", "file:////", "file:/", "FILE:///"} {
		for _, key := range []string{rel + "/offsets/2", rel + "/commits/1", rel + "/metadata", rel + "/state/0/0/1.delta"} {
			t.Run(strings.ReplaceAll(root, "/", "|")+" "+filepath.Base(key), func(t *testing.T) { attack(t, ck, root, key) })
		}
	}
	// a percent-encoded spelling of the checkpoint itself
	enc := "file://" + filepath.ToSlash(filepath.Join(base, "x", "c%6B"))
	attack(t, ck, enc, "offsets/2")
	// "." run from "/"
	t.Chdir("/")
	attack(t, ck, ".", rel+"/offsets/2")
}

// Class 2: a planted metadata cannot move the root: planting it through
// the gateway is refused, and one planted on the disk behind its back
// still leaves offsets/N a log entry of the outer root.
func TestHostilePlantedMetadata(t *testing.T) {
	_, ck := hostileCheckpoint(t)
	for _, key := range []string{"offsets/metadata", "commits/metadata", "state/metadata", "sources/0/metadata", "x/metadata"} {
		refused(t, ck, "{}", append(append([]string{"store", "put"}, housekeeping...), "-", ck, key)...)
		refused(t, ck, "{}", "store", "put", "--kind", "job", "-", ck, key)
	}
	if err := os.WriteFile(filepath.Join(ck, "offsets", "metadata"), []byte(`{"id":"evil"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ck, "commits", "metadata"), []byte(`{"id":"evil"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	attack(t, ck, ck, "offsets/2")
	attack(t, ck, filepath.Join(ck, "offsets"), "2")
	refused(t, ck, "", "store", "rm", "--kind", "job", ck, "commits/1")
	refused(t, ck, "", "store", "rm", "--kind", "job", filepath.Join(ck, "commits"), "1")
}

// Class 3: a streamed --overwrite decided on an absent key is written
// create-only: the entry a job created while the body was being read stays.
func TestHostileCheckThenWrite(t *testing.T) {
	_, ck := hostileCheckpoint(t)
	job, err := filestore.New(ck)
	if err != nil {
		t.Fatal(err)
	}
	r := racedOverwrite(t, ck, "offsets/50", func() {
		if _, err := job.Put(context.Background(), "offsets/50", []byte("the job's entry"), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	})
	r.wantErr(t, 3, `"offsets/50"`, "already exists")
	if got, _ := os.ReadFile(filepath.Join(ck, "offsets", "50")); string(got) != "the job's entry" {
		t.Fatalf("offsets/50 = %.40q: the job's entry was replaced", got)
	}
}

// racedOverwrite streams a put --overwrite of key under root as an admin
// breaking glass (the one principal still let create a log entry, who must
// not replace a job's entry either), and runs concurrent once the put has
// decided and is reading the rest of its body.
func racedOverwrite(t *testing.T, root, key string, concurrent func()) result {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), Options{Stdin: pr, Stdout: &out, Stderr: &errOut},
			[]string{"ckgate", "store", "put", "--overwrite", "--reason", "INC-9", "--decision-log", filepath.Join(t.TempDir(), "d.jsonl"),
				"-", root, key})
		pr.Close() // a writer still blocked gets an error, not a hang
		done <- result{code: code, stdout: out.String(), stderr: errOut.String()}
	}()
	// The put reads 8 MiB + 1 before it decides and starts streaming; once
	// a byte past that is taken, the decision is made.
	if _, err := pw.Write(bytes.Repeat([]byte("a"), streamThreshold+2)); err != nil {
		t.Fatal(err)
	}
	concurrent()
	pw.Write(bytes.Repeat([]byte("b"), 1<<20))
	pw.Close()
	return <-done
}

// Class 6: links inside or beside the root that point at offsets/ do not
// make its entries reachable under another name.
func TestHostileLinksInsideRoot(t *testing.T) {
	base, ck := hostileCheckpoint(t)
	for name, target := range map[string]string{
		filepath.Join(ck, "alias"):            filepath.Join(ck, "offsets"),
		filepath.Join(ck, "state", "rel"):     "../commits",
		filepath.Join(base, "x", "side"):      filepath.Join(ck, "offsets"),
		filepath.Join(base, "x", "ckalias"):   ck,
		filepath.Join(base, "x", "up"):        filepath.Join(base, "x"),
		filepath.Join(base, "x", "deep", "l"): filepath.Join(ck, "state", "0"),
	} {
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	x := filepath.Join(base, "x")
	for _, tc := range []struct{ root, key string }{
		{ck, "alias/2"}, {ck, "state/rel/1"}, {x, "side/2"}, {x, "ckalias/offsets/2"}, {x, "up/ck/commits/0"},
		{x, "up/up/ck/metadata"}, {filepath.Join(x, "ckalias"), "offsets/1"}, {filepath.Join(x, "up", "ck"), "commits/1"},
		{x, "deep/l/0/1.delta"},
	} {
		attack(t, ck, tc.root, tc.key)
	}
	// creating an entry through an alias is refused too (class 8)
	refused(t, ck, "v1", append(append([]string{"store", "put"}, housekeeping...), "-", x, "side/3")...)
}

// Class 7: a damaged metadata (a directory, a link out of the root, a
// FIFO, missing) still protects the tree.
func TestHostileDamagedMetadata(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, ck string){
		"directory": func(t *testing.T, ck string) {
			os.Remove(filepath.Join(ck, "metadata"))
			os.Mkdir(filepath.Join(ck, "metadata"), 0o755)
		},
		"link out": func(t *testing.T, ck string) {
			os.Remove(filepath.Join(ck, "metadata"))
			os.Symlink("/etc/hostname", filepath.Join(ck, "metadata"))
		},
		"missing": func(t *testing.T, ck string) { os.Remove(filepath.Join(ck, "metadata")) },
		"FIFO": func(t *testing.T, ck string) {
			os.Remove(filepath.Join(ck, "metadata"))
			if err := syscall.Mkfifo(filepath.Join(ck, "metadata"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"garbage": func(t *testing.T, ck string) { os.WriteFile(filepath.Join(ck, "metadata"), []byte("\x00\xff"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			_, ck := hostileCheckpoint(t)
			damage(t, ck)
			attack(t, ck, ck, "offsets/0")
			attack(t, ck, ck, "commits/1")
			attack(t, ck, ck, "state/0/0/1.delta")
			attack(t, ck, filepath.Dir(ck), "ck/offsets/0")
		})
	}
	t.Run("metadata and offsets missing", func(t *testing.T) {
		_, ck := hostileCheckpoint(t)
		os.Remove(filepath.Join(ck, "metadata"))
		os.RemoveAll(filepath.Join(ck, "offsets"))
		attack(t, ck, ck, "commits/1")
	})
}

// Class 8: no one but the owning query's writer session creates a log
// entry: housekeeping committing the in-flight batch 2 would make the
// restart skip it.
func TestHostileLogEntryCreation(t *testing.T) {
	_, ck := hostileCheckpoint(t)
	for _, kind := range []string{"housekeeping", "retention", "job", "admin"} {
		for _, key := range []string{"commits/2", "offsets/3", "sources/0/1", "commits/00002"} {
			refused(t, ck, "v1\n{}", "store", "put", "--kind", kind, "-", ck, key)
		}
	}
	// a sink's manifest too
	os.MkdirAll(filepath.Join(ck, "..", "out", "_spark_metadata"), 0o755)
	out := filepath.Join(filepath.Dir(ck), "out")
	before := treeContents(t, out)
	r := ckgate(t, Options{}, "v1", append(append([]string{"store", "put"}, housekeeping...), "-", out, "_spark_metadata/0")...)
	r.wantErr(t, 4, "CKG-P006")
	if !maps.Equal(before, treeContents(t, out)) {
		t.Fatal("a refused manifest was written")
	}
}

// Class 5: a known query's root reached by another spelling (a symlinked
// alias, a percent-encoded name, a link to the parent, a nested root) is
// that root; the refused run creates nothing, not even its directory.
func TestHostileKnownRootSpellings(t *testing.T) {
	dir, sp := demoDir(t)
	dir, _ = filepath.EvalSymlinks(dir)
	ck := filepath.Join(dir, "demo", "checkpoint")
	if err := os.MkdirAll(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "queries.json")
	os.WriteFile(data, []byte(`{"ckgate": {"queries": [{"query_id": "orders-v1", "root": "file://`+filepath.ToSlash(ck)+`"}]}}`), 0o644)
	if err := os.Symlink(ck, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "demo"), filepath.Join(dir, "parent")); err != nil {
		t.Fatal(err)
	}
	for _, cp := range []string{
		"alias", "alias/sub", "parent/checkpoint", "parent/checkpoint/nested", "parent",
		"file://" + filepath.ToSlash(filepath.Join(dir, "demo", "c%68eckpoint")),
		"file://" + filepath.ToSlash(filepath.Join(dir, "demo", "c%68eckpoint", "sub")),
		"demo/./checkpoint/../checkpoint/x",
	} {
		before := listTree(t, dir)
		r := runCLI(t, dir, "run", "--format", "json", "--data", data, "--checkpoint", cp, "--available-now", sp)
		r.wantErr(t, 4, "CKG-P011", "orders-v1")
		if after := listTree(t, dir); !slices.Equal(before, after) {
			t.Fatalf("refused run on %s wrote %v", cp, after)
		}
		for _, d := range []string{"sub", "nested", "x"} {
			if _, err := os.Lstat(filepath.Join(ck, d)); err == nil {
				t.Fatalf("refused run on %s created %s", cp, d)
			}
		}
	}
}

// retention apply deletes only what its plan names, whatever the spelling
// of the checkpoint, and a root planted inside a checkpoint gives it
// nothing of the outer checkpoint to delete.
func TestHostileRetention(t *testing.T) {
	base, ck := hostileCheckpoint(t)
	if err := os.WriteFile(filepath.Join(ck, "offsets", "metadata"), []byte(`{"id":"evil"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeContents(t, ck)
	r := ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "1", filepath.Join(ck, "offsets"))
	if r.code != 0 && r.code != ExitUsage && r.code != 3 && r.code != 4 {
		t.Fatalf("retention apply on a planted root: exit %d\n%s", r.code, r.stderr)
	}
	if !maps.Equal(before, treeContents(t, ck)) {
		t.Fatalf("retention apply on a root planted in offsets/ changed the checkpoint")
	}
	os.Remove(filepath.Join(ck, "offsets", "metadata"))
	if err := os.Symlink(ck, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, spelling := range []string{filepath.Join(base, "alias"), "file://" + filepath.ToSlash(ck) + "/", filepath.Join(ck, "..", "ck")} {
		ckgate(t, Options{}, "", "retention", "apply", "--min-batches", "1", spelling).want(t, 0)
		after := treeContents(t, ck)
		for _, live := range []string{"metadata", "offsets/2", "offsets/1", "commits/1", "sources/0/0"} {
			if _, ok := after[live]; !ok {
				t.Fatalf("retention apply on %s removed %s, which a restart needs", spelling, live)
			}
		}
	}
}

// archive copies into an empty new root only: not into its own tree (by
// any spelling), not over another checkpoint.
func TestHostileArchive(t *testing.T) {
	base, ck := hostileCheckpoint(t)
	if err := os.Symlink(ck, filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "other")
	os.MkdirAll(filepath.Join(other, "offsets"), 0o755)
	os.WriteFile(filepath.Join(other, "metadata"), []byte(`{"id":"other"}`), 0o644)
	os.WriteFile(filepath.Join(other, "offsets", "9"), []byte("v1"), 0o644)
	for _, dest := range []string{filepath.Join(ck, "arch"), filepath.Join(base, "alias", "arch"), ck, "file://" + filepath.ToSlash(ck)} {
		refused(t, ck, "", "archive", ck, dest)
	}
	beforeOther := treeContents(t, other)
	r := ckgate(t, Options{}, "", "archive", ck, other)
	if r.code == 0 || !maps.Equal(beforeOther, treeContents(t, other)) {
		t.Fatalf("archive over another checkpoint: exit %d, changed it: %v", r.code, !maps.Equal(beforeOther, treeContents(t, other)))
	}
}
