package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportShowsAuditFindings: a checkpoint nested in another is a
// shared-root deny of the audit; its row in the report says so.
func TestReportShowsAuditFindings(t *testing.T) {
	dir := t.TempDir()
	for rel, src := range map[string]string{
		"q1":        "checkpoint-version-3.2.0-session-window-with-repartition",
		"q1/nested": "checkpoint-version-2.4.0-streaming-join",
	} {
		if err := os.CopyFS(filepath.Join(dir, "fleet", rel), os.DirFS(filepath.Join("..", "..", "testdata", "spark", src))); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "r.html")
	ckgate(t, Options{}, "", "report", filepath.Join(dir, "fleet"), "--html", file).want(t, 0, "2 checkpoints")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?s)<tr data-loc="file://[^"]*/fleet/q1/nested".*?</tr>`).FindString(string(data))
	if !strings.Contains(row, "CKG-A005") || !strings.Contains(row, "b-deny") {
		t.Fatalf("the nested checkpoint's row lacks the audit deny:\n%s", row)
	}
}

// TestReportKeepsTheOldFileOnError: a report that cannot be made leaves
// FILE as it was and exits 2, naming what failed.
func TestReportKeepsTheOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.html")
	if err := os.WriteFile(file, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ckgate(t, Options{}, "", "report", "--html", file, "s3:///no-bucket").wantErr(t, 2, "no-bucket")
	ckgate(t, Options{}, "", "report", "--html", filepath.Join(dir, "missing", "r.html"), filepath.Join("..", "..", "testdata", "spark", "checkpoint-version-2.1.0")).wantErr(t, 2, "missing")
	if b, _ := os.ReadFile(file); string(b) != "old" {
		t.Fatalf("FILE is now %q", b)
	}
	ckgate(t, Options{}, "", "report", filepath.Join(dir, "x")).wantErr(t, 2, "html")
}
