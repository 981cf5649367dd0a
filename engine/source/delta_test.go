package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
	"github.com/ckgate/ckgate/internal/duckdbtest"
)

// realTable copies testdata/delta/<name> (tables written by Delta itself;
// see its NOTICE.txt) and returns a delta source on the copy.
func realTable(t *testing.T, name, starting string, maxFiles int) (*deltaSource, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("../../testdata/delta", name))); err != nil {
		t.Fatal(err)
	}
	st, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	text := "name: q\nsource: {kind: delta, path: /t, starting_version: \"" + starting + "\", max_files_per_batch: " + fmt.Sprint(maxFiles) + "}\nsink: {kind: noop}\n"
	s, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	env := filesEnv(t, nil, st)
	env.Open = func(context.Context, string) (gateway.Store, string, error) { return st, "file://" + dir, nil }
	src, err := New(context.Background(), s, env)
	if err != nil {
		t.Fatal(err)
	}
	return src.(*deltaSource), dir
}

func readAll(t *testing.T, src Source, start, end string) ([]string, error) {
	t.Helper()
	var rows []string
	err := src.Read(context.Background(), start, end, func(r *row.Row) error {
		rows = append(rows, string(row.AppendJSON(nil, r)))
		return nil
	})
	sort.Strings(rows)
	return rows, err
}

// TestDeltaSourceRealTable: the latest snapshot of a table Spark wrote
// (snapshot-vacuumed: six commits, then VACUUM) reads the rows DuckDB
// reads from the snapshot's files, with Spark's offset after it; reading
// the changes from version 0 hits the vacuumed files and says so.
func TestDeltaSourceRealTable(t *testing.T) {
	ctx := context.Background()
	src, dir := realTable(t, "snapshot-vacuumed", "latest", 100)
	end, err := src.Next(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"sourceVersion":1,"reservoirId":"93351cf1-c931-4326-88f0-d10e29e71b21","reservoirVersion":6,"index":-1,"isStartingVersion":false}`; end != want {
		t.Fatalf("end offset %s, want %s", end, want)
	}
	got, err := readAll(t, src, "", end)
	if err != nil {
		t.Fatal(err)
	}
	r := duckdbtest.Query(t, "SELECT col1, col2 FROM read_parquet("+duckdbtest.Quote(dir+"/*.parquet")+")")
	var want []string
	for _, v := range r.Rows {
		want = append(want, fmt.Sprintf(`{"col1":%v,"col2":%q}`, v[0], v[1]))
	}
	sort.Strings(want)
	if len(got) == 0 || !slices.Equal(got, want) {
		t.Fatalf("the source reads\n%s\nDuckDB\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if next, err := src.Next(ctx, end); err != nil || next != end {
		t.Fatalf("nothing new: %s %v", next, err)
	}

	// from version 0: its files are vacuumed, and version 2 overwrites
	old, _ := realTable(t, "snapshot-vacuumed", "0", 1)
	end, err = old.Next(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(end, `"reservoirVersion":0,"index":0,`) {
		t.Fatalf("one file of version 0: end %s", end)
	}
	_, err = readAll(t, old, "", end)
	if !errors.Is(err, ErrInputGone) || !strings.Contains(err.Error(), "FAILED_READ_FILE.FILE_NOT_EXIST") || !strings.Contains(err.Error(), "part-0000") {
		t.Fatalf("reading vacuumed files: %v", err)
	}
	all, _ := realTable(t, "snapshot-vacuumed", "0", 100)
	if _, err := all.Next(ctx, ""); err == nil || !strings.Contains(err.Error(), "version 2 removes data") {
		t.Fatalf("an overwrite in the versions read: %v", err)
	}
}
