package source

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func filesEnv(t *testing.T, cp, in gateway.Store) Env {
	return Env{
		Checkpoint: cp,
		CreateEntry: func(ctx context.Context, key string, data []byte) (gateway.Entry, error) {
			if _, err := cp.Put(ctx, key, data, gateway.IfAbsent()); err != nil {
				got, _, gerr := cp.Get(ctx, key)
				if gerr != nil {
					return gateway.Entry{}, err
				}
				return gateway.Entry{Data: got, Adopted: true}, nil
			}
			return gateway.Entry{Data: data}, nil
		},
		Dir:  "sources/0",
		Open: func(context.Context, string) (gateway.Store, string, error) { return in, "mem://in", nil },
		Now:  time.Now,
	}
}

func TestFilesSource(t *testing.T) {
	ctx := context.Background()
	cp, in := memstore.New(), memstore.New()
	for _, k := range []string{"b.jsonl", "a.jsonl", "c.jsonl", "_SUCCESS", ".x.tmp", "_spark_metadata/0", "sub/d.jsonl"} {
		in.Put(ctx, k, []byte(fmt.Sprintf(`{"f":%q}`+"\n\n", k)), gateway.None())
	}
	s, err := spec.Parse([]byte("name: q\nsource: {kind: files, path: mem://in, max_files_per_batch: 2}\nsink: {kind: noop}\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := New(ctx, s, filesEnv(t, cp, in))
	if err != nil {
		t.Fatal(err)
	}
	read := func(start, end string) []string {
		var got []string
		if err := src.Read(ctx, start, end, func(r *row.Row) error { got = append(got, r.Get("f").S); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	e0, _ := src.Next(ctx, "")
	e1, _ := src.Next(ctx, e0)
	e2, _ := src.Next(ctx, e1)
	if e0 != `{"logOffset":0}` || e1 != `{"logOffset":1}` || e2 != e1 {
		t.Fatalf("offsets %s %s %s", e0, e1, e2)
	}
	if got := fmt.Sprint(read("", e0), read(e0, e1)); got != "[a.jsonl b.jsonl] [c.jsonl sub/d.jsonl]" {
		t.Fatalf("read %s", got)
	}
	// a new process: the log decides, and a log entry written by an attempt
	// that crashed before its offsets is used again
	in.Put(ctx, "e.jsonl", []byte(`{"f":"e.jsonl"}`), gateway.None())
	again, err := New(ctx, s, filesEnv(t, cp, in))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := again.Next(ctx, e0); e != e1 {
		t.Fatalf("after a restart at offset %s: next %s, want the logged %s", e0, e, e1)
	}
	if e, _ := again.Next(ctx, e1); e != `{"logOffset":2}` {
		t.Fatalf("new file: next %s", e)
	}
	in.Put(ctx, "f.jsonl", []byte("not json\n"), gateway.None())
	e3, _ := again.Next(ctx, `{"logOffset":2}`)
	err = again.Read(ctx, `{"logOffset":2}`, e3, func(*row.Row) error { return nil })
	if err == nil || !contains(err.Error(), "mem://in/f.jsonl:1") {
		t.Fatalf("bad line: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// A log entry written after this source read the log (by the attempt a
// take-over fenced, which still writes sources/0/N and offsets/N) is read
// when a batch needs it, once, with the files that attempt recorded.
func TestFilesSourceEntryWrittenSinceOpen(t *testing.T) {
	ctx := context.Background()
	cp, in := memstore.New(), memstore.New()
	for _, k := range []string{"a.jsonl", "b.jsonl"} {
		in.Put(ctx, k, []byte(fmt.Sprintf(`{"f":%q}`, k)), gateway.None())
	}
	s, err := spec.Parse([]byte("name: q\nsource: {kind: files, path: mem://in, max_files_per_batch: 1}\nsink: {kind: noop}\n"))
	if err != nil {
		t.Fatal(err)
	}
	zombie, err := New(ctx, s, filesEnv(t, cp, in))
	if err != nil {
		t.Fatal(err)
	}
	e0, err := zombie.Next(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	taker, err := New(ctx, s, filesEnv(t, cp, in)) // reads the log: entry 0
	if err != nil {
		t.Fatal(err)
	}
	e1, err := zombie.Next(ctx, e0) // entry 1, written after the taker read the log
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range [][2]string{{"", e0}, {e0, e1}} {
		if err := taker.Read(ctx, r[0], r[1], func(r *row.Row) error { got = append(got, r.Get("f").S); return nil }); err != nil {
			t.Fatalf("read %s..%s: %v", r[0], r[1], err)
		}
	}
	if fmt.Sprint(got) != "[a.jsonl b.jsonl]" {
		t.Fatalf("read %v, want each file once", got)
	}
	if err := taker.Read(ctx, e1, `{"logOffset":5}`, func(*row.Row) error { return nil }); err == nil ||
		!contains(err.Error(), "sources/0/2: file source log entry missing") {
		t.Fatalf("entry never written: %v", err)
	}
}
