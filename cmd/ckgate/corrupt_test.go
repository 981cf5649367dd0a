package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/checkpoint/corrupttest"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/internal/filetree"
)

// readDir returns every file under root (dotfiles too), by slash path.
func readDir(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files, err := filetree.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeDir writes files under root, making directories as needed.
func writeDir(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	if err := filetree.Write(root, files); err != nil {
		t.Fatal(err)
	}
}

// changed lists the files of before that after lacks or holds other bytes
// of, and (unless newOK) the files after adds. newOK also lets the writer
// record be renewed: a run that starts takes the checkpoint.
func changed(before, after map[string][]byte, newOK bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if newOK && strings.HasSuffix(k, gateway.WriterKey) {
			continue
		}
		if a, ok := after[k]; !ok {
			out = append(out, k+" deleted")
		} else if !bytes.Equal(a, before[k]) {
			out = append(out, k+" overwritten")
		}
	}
	if !newOK {
		for _, k := range slices.Sorted(maps.Keys(after)) {
			if _, ok := before[k]; !ok {
				out = append(out, k+" created")
			}
		}
	}
	return out
}

// TestCorruptCheckpointsCLI runs the demo query into a clean checkpoint on
// the local disk, derives every corrupt variant of it, and for each checks:
// `inspect` (table and JSON) names the key with a finding and a next step
// and exits 1 exactly when the case is fatal; `run` refuses a fatal one
// (exit 1, an error naming the key and the next step) and changes no byte
// of the checkpoint or the sink (no file created either); a leftover temp
// file is only a warning and `run` goes on without touching an existing
// file.
func TestCorruptCheckpointsCLI(t *testing.T) {
	dir, sp := demoDir(t)
	runCLI(t, dir, "run", "--format", "json", "--checkpoint", "demo/checkpoint", "--available-now", sp).want(t, 0)
	tree := readDir(t, dir)
	ck := map[string][]byte{}
	for k, v := range tree {
		if rest, ok := strings.CutPrefix(k, "demo/checkpoint/"); ok {
			ck[rest] = v
		}
	}
	cases := corrupttest.Cases(corrupttest.Files(ck))
	t.Logf("%d corrupt cases from a checkpoint of %d files", len(cases), len(ck))
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			bad := corrupttest.Files(ck).Clone()
			tc.Apply(bad)
			// the plan records absolute paths: rebuild the tree in place
			root, spec := dir, sp
			for _, d := range []string{"demo/checkpoint", "demo/out"} {
				if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
					t.Fatal(err)
				}
			}
			files := map[string][]byte{}
			for k, v := range tree {
				if strings.HasPrefix(k, "demo/out/") {
					files[k] = v
				}
			}
			for k, v := range bad {
				files["demo/checkpoint/"+k] = v
			}
			writeDir(t, root, files)
			code := 0
			if tc.Fatal {
				code = 1
			}

			// inspect: JSON names the key, table shows it with the next step
			r := runCLI(t, root, "inspect", "--format", "json", "demo/checkpoint")
			r.want(t, code)
			var rep checkpoint.Report
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("inspect JSON: %v\n%s", err, r.stdout)
			}
			i := slices.IndexFunc(rep.Findings, func(f checkpoint.Finding) bool {
				return f.Key == tc.Key && slices.Contains(tc.Findings, f.ID)
			})
			if i < 0 {
				t.Fatalf("no %v finding about %s: %+v", tc.Findings, tc.Key, rep.Findings)
			}
			f := rep.Findings[i]
			if f.Next == "" || (f.Severity == checkpoint.SeverityError) != tc.Fatal {
				t.Errorf("finding %+v: fatal=%v", f, tc.Fatal)
			}
			r = runCLI(t, root, "inspect", "demo/checkpoint")
			r.want(t, code, tc.Key, f.ID, "Next: ")

			// run: refused without a write, or (a temp file) runs on
			before := readDir(t, filepath.Join(root, "demo"))
			r = runCLI(t, root, "run", "--format", "json", "--checkpoint", "demo/checkpoint", "--available-now", spec)
			if tc.Fatal {
				r.wantErr(t, 1, tc.Key, "ckgate will not overwrite it", "ckgate inspect")
				if !strings.Contains(r.stderr, "ckgate restore ARCHIVE DEST") && !strings.Contains(r.stderr, "ckgate archive") && !strings.Contains(r.stderr, "newer Spark or ckgate") &&
					!strings.Contains(r.stderr, "ckgate store rm") {
					t.Errorf("no next step in %q", r.stderr)
				}
			} else {
				r.want(t, 0)
			}
			if d := changed(before, readDir(t, filepath.Join(root, "demo")), !tc.Fatal); len(d) > 0 {
				t.Errorf("run changed the checkpoint or the sink: %s", strings.Join(d, ", "))
			}
		})
	}
}

// TestCorruptSparkCheckpointCLI: `inspect` on every corruption of a real
// Spark checkpoint names the key with a finding and a next step, and exits
// 1 exactly when a restart would fail.
func TestCorruptSparkCheckpointCLI(t *testing.T) {
	clean := readDir(t, filepath.Join(sparkTestdata, "checkpoint-version-3.3.0-streaming-deduplication"))
	cases := corrupttest.Cases(corrupttest.Files(clean))
	t.Logf("%d corrupt cases from a Spark 3.3.0 checkpoint", len(cases))
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			bad := corrupttest.Files(clean).Clone()
			tc.Apply(bad)
			root := filepath.Join(t.TempDir(), "ck")
			writeDir(t, root, bad)
			before := readDir(t, root)
			code := 0
			if tc.Fatal {
				code = 1
			}
			r := ckgate(t, Options{}, "", "inspect", "--format", "json", root)
			r.want(t, code)
			var rep checkpoint.Report
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rep.Findings, func(f checkpoint.Finding) bool {
				return f.Key == tc.Key && slices.Contains(tc.Findings, f.ID) && f.Next != ""
			}) {
				t.Fatalf("no %v finding about %s: %+v", tc.Findings, tc.Key, rep.Findings)
			}
			ckgate(t, Options{}, "", "inspect", root).want(t, code, tc.Key, "Next: ")
			if d := changed(before, readDir(t, root), false); len(d) > 0 {
				t.Errorf("inspect changed the checkpoint: %v", d)
			}
		})
	}
}
