package source

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

// TestFilesStart: on a root with a files boundary, the files it names and
// those modified before its time are never input; a boundary for another
// input or another source kind is refused.
func TestFilesStart(t *testing.T) {
	ctx := context.Background()
	in := memstore.New()
	for _, k := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
		in.Put(ctx, k, []byte(`{"f":1}`), gateway.None())
	}
	cut := time.Now()
	time.Sleep(5 * time.Millisecond)
	in.Put(ctx, "d.jsonl", []byte(`{"f":1}`), gateway.None())
	s, err := spec.Parse([]byte("name: q\nsource: {kind: files, path: mem://in, max_files_per_batch: 10}\nsink: {kind: noop}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		start StartPoint
		want  string // the files of the first batch, or the error
	}{
		{"processed", StartPoint{Files: &FilesStart{Path: "mem://in", Processed: []string{"mem://in/a.jsonl", "mem://in/c.jsonl"}}}, "b.jsonl d.jsonl"},
		{"modified from", StartPoint{Files: &FilesStart{Path: "mem://in/", ModifiedFrom: &cut}}, "d.jsonl"},
		{"no path", StartPoint{Files: &FilesStart{Processed: []string{"mem://in/a.jsonl"}}}, "b.jsonl c.jsonl d.jsonl"},
		{"other input", StartPoint{Files: &FilesStart{Path: "mem://other", ModifiedFrom: &cut}}, "error: the boundary is for the input mem://other"},
		{"kafka", StartPoint{Kafka: map[string]map[int32]int64{"t": {0: 1}}}, "error: no files boundary"},
		{"empty", StartPoint{Files: &FilesStart{Path: "mem://in"}}, "error: names neither"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cp := memstore.New()
			data, _ := json.Marshal(tc.start)
			cp.Put(ctx, StartKey, data, gateway.IfAbsent())
			src, err := New(ctx, s, filesEnv(t, cp, in))
			if err != nil {
				if !strings.HasPrefix(tc.want, "error: ") || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "error: ")) {
					t.Fatalf("open: %v, want %s", err, tc.want)
				}
				return
			}
			defer src.Close()
			if strings.HasPrefix(tc.want, "error: ") {
				t.Fatalf("opened, want %s", tc.want)
			}
			end, err := src.Next(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range src.(*files).batches[0] {
				got = append(got, strings.TrimPrefix(e.Path, "mem://in/"))
			}
			if end != `{"logOffset":0}` || strings.Join(got, " ") != tc.want {
				t.Fatalf("first batch %s: %v, want %s", end, got, tc.want)
			}
		})
	}
}
