package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/lifecycle"
)

const restoreFixture = "../../testdata/spark/checkpoint-version-3.2.0-streaming-aggregate-with-repartition"

// archived copies the fixture checkpoint and archives it; it returns the
// checkpoint and the archive.
func archived(t *testing.T) (src, arc string) {
	t.Helper()
	src = filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(src, os.DirFS(restoreFixture)); err != nil {
		t.Fatal(err)
	}
	arc = filepath.Join(t.TempDir(), "archive")
	ckgate(t, Options{}, "", "archive", src, arc).want(t, 0, "verified")
	return src, arc
}

// sameFiles fails unless every file under src is under dst with the same
// bytes, and dst holds nothing else outside _ckgate/.
func sameFiles(t *testing.T, src, dst string) {
	t.Helper()
	n := 0
	for _, dir := range []string{src, dst} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			other := filepath.Join(src, rel)
			if dir == src {
				other = filepath.Join(dst, rel)
				n++
			} else if strings.HasPrefix(filepath.ToSlash(rel), "_ckgate/restore") {
				return nil
			}
			if slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), ".ckgate-locks") { // the local backend's lock files, not keys
				if dir == src {
					n--
				}
				return nil
			}
			a, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(other)
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: differs from %s (%v)", p, other, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("no files compared")
	}
}

// inspected is inspect --format json of url.
// inspected is inspect's report of url without the files' write times
// (offsets_written_ms, commit_written_ms): they come from the listing, and
// a copy need not keep them.
func inspected(t *testing.T, url string) checkpoint.Report {
	t.Helper()
	r := ckgate(t, Options{}, "", "inspect", "--format", "json", url)
	r.want(t, 0)
	rep := inspectJSON(t, r)
	for i := range rep.Batches {
		rep.Batches[i].OffsetsWrittenMs, rep.Batches[i].CommitWrittenMs = nil, nil
	}
	return rep
}

func TestArchiveVerify(t *testing.T) {
	src, arc := archived(t)
	ckgate(t, Options{}, "", "archive", "verify", arc).want(t, 0, "every file matches")
	// The old form still archives, flags after the arguments too.
	ckgate(t, Options{}, "", "archive", src, filepath.Join(t.TempDir(), "a2"), "--format", "json").want(t, 0, `"verified": true`)
	ckgate(t, Options{}, "", "archive", "verify", src).wantErr(t, 2, "not an archive", lifecycle.ManifestKey)
	ckgate(t, Options{}, "", "archive", "verify").wantErr(t, 2, "want ARCHIVE")

	// Same size, other bytes; one file gone; one added.
	tampered := filepath.Join(arc, "offsets", "1")
	b, err := os.ReadFile(tampered)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-2] ^= 1
	if err := os.WriteFile(tampered, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(arc, "commits", "0")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(arc, "stray"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "archive", "verify", arc)
	r.wantErr(t, 1, "3 files differ", "commits/0")
	rows := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			rows[f[1]] = f[0]
		}
	}
	for k, p := range map[string]string{"offsets/1": lifecycle.HashDiff, "commits/0": lifecycle.Missing, "stray": lifecycle.Extra} {
		if rows[k] != p {
			t.Fatalf("%s: want %s:\n%s", k, p, r.stdout)
		}
	}
	r = ckgate(t, Options{}, "", "archive", "verify", "--json", arc)
	r.wantErr(t, 1)
	var rep archiveVerifyJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OK || len(rep.Mismatches) != 3 || rep.Mismatches[0].Key != "commits/0" || rep.Mismatches[0].Problem != lifecycle.Missing {
		t.Fatalf("report %+v", rep)
	}
	// A manifest that does not parse is unreadable input, named.
	if err := os.WriteFile(filepath.Join(arc, filepath.FromSlash(lifecycle.ManifestKey)), []byte(`{"version":1,"entries":[{"key":"../x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "archive", "verify", arc).wantErr(t, 2, lifecycle.ManifestKey, "corrupt")
}

func TestRestore(t *testing.T) {
	src, arc := archived(t)
	dest := filepath.Join(t.TempDir(), "restored")
	ckgate(t, Options{}, "", "restore", arc).wantErr(t, 2, "want ARCHIVE DEST")
	ckgate(t, Options{}, "", "restore", arc, filepath.Join(arc, "sub")).wantErr(t, 2)
	ckgate(t, Options{}, "", "restore", src, dest).wantErr(t, 2, "not an archive")
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("a refused restore made %s: %v", dest, err)
	}
	ckgate(t, Options{}, "", "restore", arc, dest).want(t, 0, "restored", "31 files", "verified")
	sameFiles(t, src, dest)
	want, got := inspected(t, src), inspected(t, dest)
	if want.QueryID == "" || got.QueryID != want.QueryID || got.Status != want.Status || !jsonEqual(got.Batches, want.Batches) ||
		!jsonEqual(got.LatestCommitBatch, want.LatestCommitBatch) || len(got.Batches) == 0 {
		t.Fatalf("inspect: restored %+v\nsource %+v", got, want)
	}
	// Restored once: a second restore into it is refused.
	ckgate(t, Options{}, "", "restore", arc, dest).wantErr(t, 3, "restored here already")

	// A non-empty DEST is refused and left as it was.
	busy := t.TempDir()
	if err := os.WriteFile(filepath.Join(busy, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "restore", arc, busy).wantErr(t, 3, "not empty", "notes.txt")
	if es, _ := os.ReadDir(busy); len(es) != 1 {
		t.Fatalf("a refused restore wrote into %s: %v", busy, es)
	}

	// A tampered archive is refused, naming the file; nothing is written.
	b, err := os.ReadFile(filepath.Join(arc, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(arc, "metadata"), bytes.ToUpper(b), 0o644); err != nil {
		t.Fatal(err)
	}
	d2 := filepath.Join(t.TempDir(), "r2")
	ckgate(t, Options{}, "", "restore", arc, d2).wantErr(t, 1, "metadata: SHA-256", "nothing was restored")
	if _, err := os.Stat(d2); !os.IsNotExist(err) {
		t.Fatalf("a refused restore made %s: %v", d2, err)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// A restore that fails part-way leaves a root that is marked incomplete:
// run refuses it, and the same restore run again completes it.
func TestRestoreInterrupted(t *testing.T) {
	dir := t.TempDir()
	sp := filesQuery(t, dir, 0, 4)
	runCLI(t, dir, "run", "--checkpoint", "ck", "--available-now", sp).want(t, 0)
	runCLI(t, dir, "archive", "ck", "arc").want(t, 0, "verified")
	dest := filepath.Join(dir, "restored")
	faults := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Prefix: "sources/", Nth: 1, Action: gateway.FailBefore})
	reg := registryWith(func(s gateway.Store) gateway.Store { return faults.Wrap(s) })
	ckgate(t, Options{Registry: reg}, "", "restore", "--concurrency", "1", filepath.Join(dir, "arc"), dest).wantErr(t, 1, "did not complete", "sources/")
	if _, err := os.Stat(filepath.Join(dest, filepath.FromSlash(lifecycle.RestoreKey))); err != nil {
		t.Fatalf("no restore marker: %v", err)
	}
	for _, k := range []string{"metadata", lifecycle.RestoredKey} {
		if _, err := os.Stat(filepath.Join(dest, filepath.FromSlash(k))); !os.IsNotExist(err) {
			t.Fatalf("%s written by a restore that failed: %v", k, err)
		}
	}
	runCLI(t, dir, "run", "--checkpoint", "restored", "--available-now", sp).wantErr(t, 1, "restore into this root did not complete", "ckgate restore")
	// inspect says so too (an error finding), and stops saying it once done
	if r := runCLI(t, dir, "inspect", "restored"); r.code != 1 || !strings.Contains(r.stdout, "restore-incomplete") || !strings.Contains(r.stdout, "ckgate restore ARCHIVE DEST` again") {
		t.Fatalf("inspect of a half-restored root: exit %d\n%s", r.code, r.stdout)
	}
	r := runCLI(t, dir, "restore", "arc", "restored")
	r.want(t, 0, "completed an earlier restore")
	sameFiles(t, filepath.Join(dir, "ck"), dest)
	if r := runCLI(t, dir, "inspect", "restored"); strings.Contains(r.stdout+r.stderr, "restore-incomplete") {
		t.Fatalf("a completed restore is still reported incomplete:\n%s", r.stdout)
	}
	runCLI(t, dir, "run", "--checkpoint", "restored", "--available-now", sp).want(t, 0)
}

// Archive, verify and restore on S3 (versitygw): the archive and the
// restored root in one bucket, and a restore from it back to the disk.
func TestRestoreS3(t *testing.T) {
	_, at := s3Bucket(t, emulator.Versitygw(t))
	src := filepath.Join(t.TempDir(), "ck")
	if err := os.CopyFS(src, os.DirFS(restoreFixture)); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "archive", src, at("backups/q1")).want(t, 0, "verified")
	ckgate(t, Options{}, "", "archive", "verify", at("backups/q1")).want(t, 0, "every file matches")
	ckgate(t, Options{}, "", "restore", at("backups/q1"), at("team/q1")).want(t, 0, "restored", "verified")
	ckgate(t, Options{}, "", "restore", at("backups/q1"), at("team/q1")).wantErr(t, 3, "restored here already")
	want, got := inspected(t, src), inspected(t, at("team/q1"))
	if got.QueryID != want.QueryID || !jsonEqual(got.Batches, want.Batches) {
		t.Fatalf("inspect: restored %+v\nsource %+v", got, want)
	}
	local := filepath.Join(t.TempDir(), "back")
	ckgate(t, Options{}, "", "restore", at("backups/q1"), local).want(t, 0, "restored")
	sameFiles(t, src, local)
	// An object changed in the archive: verify and restore name it.
	ckgate(t, Options{}, "x", "store", "put", "-", at("backups/q1"), "stray").want(t, 0)
	ckgate(t, Options{}, "", "archive", "verify", at("backups/q1")).wantErr(t, 1, "stray")
	ckgate(t, Options{}, "", "restore", at("backups/q1"), at("team/q2")).wantErr(t, 1, "stray", "nothing was restored")
}

// Findings that send the user to an archive name the command that
// restores one, and the restore they name works on that checkpoint's
// archive.
func TestFindingsNameRestore(t *testing.T) {
	src, arc := archived(t)
	if err := os.Remove(filepath.Join(src, "metadata")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "offsets", "1"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ckgate(t, Options{}, "", "inspect", "--format", "json", src)
	r.wantErr(t, 1)
	rep := inspectJSON(t, r)
	n := 0
	for _, f := range rep.Findings {
		if strings.Contains(f.Next, "from an archive") {
			n++
			if !strings.Contains(f.Next, "ckgate restore ARCHIVE DEST") {
				t.Errorf("%s %s: next step does not name the restore command: %s", f.ID, f.Key, f.Next)
			}
		}
	}
	if n < 2 {
		t.Fatalf("%d findings point at an archive: %+v", n, rep.Findings)
	}
	dest := filepath.Join(t.TempDir(), "restored")
	ckgate(t, Options{}, "", "restore", arc, dest).want(t, 0, "restored")
	ckgate(t, Options{}, "", "inspect", dest).want(t, 0)
}

// The policy decides a restore before its first write: DEST inside another
// checkpoint's tree (its metadata would start a root inside a root), or a
// rule of the user's, refuses it (exit 4) and nothing is created.
func TestRestoreDeniedByPolicy(t *testing.T) {
	src, arc := archived(t)
	nested := filepath.Join(src, "restored")
	ckgate(t, Options{}, "", "restore", arc, nested).wantErr(t, 4, "CKG-P007", "metadata")
	if _, err := os.Lstat(nested); err == nil {
		t.Fatalf("a refused restore created %s", nested)
	}
	pol := t.TempDir()
	rule := `package ckgate.gateway.rules.no_restore

import data.ckgate.lib

deny contains lib.violation("ORG-002", "restores need a change ticket") if {
	input.action == "put"
	input.principal.kind == "archive"
}
`
	if err := os.WriteFile(filepath.Join(pol, "no_restore.rego"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "r")
	dlog := filepath.Join(t.TempDir(), "d.jsonl")
	ckgate(t, Options{}, "", "restore", "--policy", pol, "--decision-log", dlog, arc, dest).wantErr(t, 4, "ORG-002")
	if _, err := os.Lstat(dest); err == nil {
		t.Fatalf("a refused restore created %s", dest)
	}
	if b, err := os.ReadFile(dlog); err != nil || !strings.Contains(string(b), "ORG-002") {
		t.Fatalf("decision log %s %v", b, err)
	}
}
