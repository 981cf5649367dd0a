package demo

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestFilesDeterministicAndUntidy(t *testing.T) {
	a, b := Files(Default()), Files(Default())
	if !maps.EqualFunc(a, b, bytes.Equal) || len(a) != Default().Files {
		t.Fatal("two generations differ")
	}
	seen := map[string]bool{}
	var dups, health, epoch, events int
	for _, data := range a {
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var e Event
			if err := json.Unmarshal(l, &e); err != nil {
				t.Fatal(err)
			}
			events++
			if seen[string(l)] {
				dups++
			}
			seen[string(l)] = true
			if e.Page == "health" {
				health++
			}
			if _, ok := e.TS.(float64); ok {
				epoch++
			}
		}
	}
	if dups == 0 || health == 0 || epoch == 0 || epoch == events || events < 1000 {
		t.Fatalf("%d events: %d duplicates, %d health checks, %d epoch-ms times", events, dups, health, epoch)
	}
}

func TestWriteTwiceChangesNothing(t *testing.T) {
	dir := t.TempDir()
	if n, err := Write(dir, Default()); err != nil || n != Default().Files {
		t.Fatalf("first write: %d, %v", n, err)
	}
	if n, err := Write(dir, Default()); err != nil || n != 0 {
		t.Fatalf("second write: %d, %v", n, err)
	}
	os.WriteFile(filepath.Join(dir, "clicks-0000.jsonl"), []byte("other"), 0o644)
	if _, err := Write(dir, Default()); err == nil {
		t.Fatal("a changed file was not reported")
	}
}
