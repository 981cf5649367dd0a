package engine_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/checkpoint/corrupttest"
	"github.com/ckgate/ckgate/gateway"
)

// snapshot returns every key and its bytes.
func snapshot(t *testing.T, st gateway.Store) corrupttest.Files {
	t.Helper()
	ctx := context.Background()
	out := corrupttest.Files{}
	for a, err := range st.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := st.Get(ctx, a.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[a.Key] = b
	}
	return out
}

func load(t *testing.T, st gateway.Store, f corrupttest.Files) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if _, err := st.Put(context.Background(), k, f[k], gateway.None()); err != nil {
			t.Fatal(err)
		}
	}
}

// diff describes how after differs from before. A run that started
// (newKeysOK) may add keys and renew its writer record, the one mutable
// object of a checkpoint.
func diff(before, after corrupttest.Files, newKeysOK bool) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if newKeysOK && k == gateway.WriterKey {
			continue
		}
		if a, ok := after[k]; !ok {
			out = append(out, k+" deleted")
		} else if !bytes.Equal(a, before[k]) {
			out = append(out, k+" overwritten")
		}
	}
	if !newKeysOK {
		for _, k := range slices.Sorted(maps.Keys(after)) {
			if _, ok := before[k]; !ok {
				out = append(out, k+" created")
			}
		}
	}
	return out
}

// TestCorruptCheckpoints derives corrupt checkpoints from a clean one the
// engine wrote (a stateful query with a file source and a file sink) and
// checks, for each: Inspect names the key at fault with a finding and a
// safe next step; Open refuses a fatal one with an error naming the key
// and the next step, writing nothing at all to the checkpoint or the sink;
// a leftover temp file is a warning and the query runs on without
// touching an existing key.
func TestCorruptCheckpoints(t *testing.T) {
	ctx := context.Background()
	files := genEvents(3, 15, 30)
	w := newWorld()
	writeEvents(t, w, "in", files[:12])
	if _, err := runAll(ctx, mustSpec(t, tumblingSpec), w.Options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	writeEvents(t, w, "in", files) // new input: a run that starts has work to do
	clean, in, out := snapshot(t, w.CP), snapshot(t, w.Store("in")), snapshot(t, w.Store("out"))
	if rep, err := checkpoint.Inspect(ctx, w.CP, checkpoint.Options{}); err != nil || !rep.OK() || rep.Status != checkpoint.StatusClean {
		t.Fatalf("the clean checkpoint: %v %+v", err, rep)
	}
	cases := corrupttest.Cases(clean)
	t.Logf("%d corrupt cases from a checkpoint of %d keys", len(cases), len(clean))
	if len(cases) < 30 {
		t.Fatalf("only %d cases: %v", len(cases), caseNames(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			cw := newWorld()
			bad := clean.Clone()
			tc.Apply(bad)
			load(t, cw.CP, bad)
			load(t, cw.Store("in"), in)
			load(t, cw.Store("out"), out)

			checkInspect(t, cw.CP, tc)

			beforeCP, beforeOut := snapshot(t, cw.CP), snapshot(t, cw.Store("out"))
			_, err := runAll(ctx, mustSpec(t, tumblingSpec), cw.Options(nil, 7))
			if tc.Fatal {
				checkRefusal(t, err, tc)
			} else if err != nil {
				t.Fatalf("run: %v", err)
			}
			if d := diff(beforeCP, snapshot(t, cw.CP), !tc.Fatal); len(d) > 0 {
				t.Errorf("the checkpoint changed: %s", strings.Join(d, ", "))
			}
			if d := diff(beforeOut, snapshot(t, cw.Store("out")), !tc.Fatal); len(d) > 0 {
				t.Errorf("the sink changed: %s", strings.Join(d, ", "))
			}
		})
	}
}

func caseNames(cs []corrupttest.Case) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// checkInspect: a finding about the key, of the case's kind, with a next
// step; an error (and not OK) exactly when the case is fatal.
func checkInspect(t *testing.T, st gateway.Store, tc corrupttest.Case) {
	t.Helper()
	rep, err := checkpoint.Inspect(context.Background(), st, checkpoint.Options{})
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	var found *checkpoint.Finding
	for i, f := range rep.Findings {
		if f.Key == tc.Key && slices.Contains(tc.Findings, f.ID) {
			found = &rep.Findings[i]
			break
		}
	}
	if found == nil {
		t.Fatalf("inspect has no %v finding about %s: %+v", tc.Findings, tc.Key, rep.Findings)
	}
	want := checkpoint.SeverityWarning
	if tc.Fatal {
		want = checkpoint.SeverityError
	}
	if found.Severity != want {
		t.Errorf("finding %+v: severity %s, want %s", *found, found.Severity, want)
	}
	if found.Next == "" {
		t.Errorf("finding %+v has no next step", *found)
	}
	if rep.OK() == tc.Fatal {
		t.Errorf("report OK=%v for a fatal=%v case: status %s, findings %+v", rep.OK(), tc.Fatal, rep.Status, rep.Findings)
	}
}

// checkRefusal: the run was refused with an error that names the key, says
// ckgate will not overwrite it and gives a next step.
func checkRefusal(t *testing.T, err error, tc corrupttest.Case) {
	t.Helper()
	if err == nil {
		t.Fatal("run started on a corrupt checkpoint")
	}
	msg := err.Error()
	for _, s := range []string{tc.Key, "ckgate will not overwrite", "ckgate inspect"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
	if !strings.Contains(msg, "ckgate archive") && !strings.Contains(msg, "ckgate fresh-start") && !strings.Contains(msg, "newer") &&
		!strings.Contains(msg, "ckgate store rm") {
		t.Errorf("error %q names no next step", msg)
	}
	if strings.Contains(tc.Name, "zero-byte") && !strings.Contains(msg, tc.Key+" is empty") {
		t.Errorf("error %q does not say %s is empty", msg, tc.Key)
	}
	var ce *engine.CorruptError
	if !errors.As(err, &ce) || ce.Key != tc.Key {
		t.Errorf("error %q is not a *CorruptError about %s", msg, tc.Key)
	}
	if !errors.Is(err, engine.ErrCorrupt) {
		t.Errorf("error %q is not engine.ErrCorrupt", msg)
	}
	if errors.Is(err, gateway.ErrNotFound) {
		t.Errorf("error %q is ErrNotFound (the CLI would call it unreadable input)", msg)
	}
}
