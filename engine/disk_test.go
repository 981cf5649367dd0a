package engine_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/filestore"
)

// TestCrashOnLocalDisk runs the session query on real files (input,
// output and checkpoint on the local disk, through filestore), crashing at
// every third write, and compares the sink with the reference after each
// restart.
func TestCrashOnLocalDisk(t *testing.T) {
	files := genEvents(3, 6, 30)
	want := sessionRows(files)
	for k := 1; ; k += 3 {
		dir := t.TempDir()
		in := filepath.Join(dir, "in")
		os.MkdirAll(in, 0o755)
		for i, f := range files {
			var b strings.Builder
			for _, e := range f {
				b.Write(e.json())
				b.WriteByte('\n')
			}
			os.WriteFile(filepath.Join(in, fmt.Sprintf("clicks-%03d.jsonl", i)), []byte(b.String()), 0o644)
		}
		specText := strings.NewReplacer("mem://in", in, "mem://out", filepath.Join(dir, "out")).Replace(sessionSpec)
		cpDir := filepath.Join(dir, "ckpt")
		os.MkdirAll(cpDir, 0o755)
		open := func(f *gateway.Faults, pid int) engine.Options {
			cp, err := filestore.New(cpDir)
			if err != nil {
				t.Fatal(err)
			}
			var st gateway.Store = cp
			reg := gateway.NewRegistry().Register("file", func(ctx context.Context, u *url.URL) (gateway.Store, error) {
				s, err := filestore.Open(ctx, u)
				if err != nil || f == nil {
					return s, err
				}
				return f.Wrap(s), nil
			})
			if f != nil {
				st = f.Wrap(st)
			}
			return engine.Options{Checkpoint: st, Registry: reg, Session: gateway.SessionOptions{Host: "h", PID: pid,
				Lease: time.Minute, Heartbeat: -1, ProcessAlive: func(p int) bool { return p == pid }}}
		}
		faults := gateway.NewFaults(gateway.Fault{Op: gateway.OpPut, Nth: k, Action: gateway.Crash})
		_, err := runAll(context.Background(), mustSpec(t, specText), open(faults, 1))
		if faults.Fired() == 0 {
			if err != nil {
				t.Fatal(err)
			}
			if k < 20 {
				t.Fatalf("only %d writes", k)
			}
			return
		}
		if _, err := runAll(context.Background(), mustSpec(t, specText), open(nil, 2)); err != nil {
			t.Fatalf("write %d: restart: %v", k, err)
		}
		out, err := filestore.New(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		got := sinkRows(t, out, "file://"+filepath.ToSlash(filepath.Join(dir, "out"))+"/")
		if !slices.Equal(got, want) {
			t.Fatalf("crash at write %d: sink %d rows, reference %d", k, len(got), len(want))
		}
	}
}
