package validate_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/validate"
)

func run(t *testing.T, raw string, opts validate.Options) *validate.Report {
	t.Helper()
	rep, err := validate.Run(context.Background(), raw, opts)
	if err != nil {
		t.Fatalf("Run(%s): %v", raw, err)
	}
	return rep
}

func dump(rep *validate.Report) string {
	var b bytes.Buffer
	_ = validate.WriteTable(&b, rep)
	return b.String()
}

// want checks the result of layer/op and returns it.
func want(t *testing.T, rep *validate.Report, layer validate.Layer, op string, status validate.Status) validate.Result {
	t.Helper()
	res, ok := rep.Find(layer, op)
	if !ok {
		t.Fatalf("no %s/%s result:\n%s", layer, op, dump(rep))
	}
	if res.Result != status {
		t.Fatalf("%s/%s = %s, want %s:\n%s", layer, op, res.Result, status, dump(rep))
	}
	return res
}

// wantDenied fails t unless the authorization probe op failed with the
// provider's code and the gateway kind permission, and returns its result.
func wantDenied(t *testing.T, rep *validate.Report, op, code string) validate.Result {
	t.Helper()
	res := want(t, rep, validate.LayerAuthorization, op, validate.Fail)
	if res.Code != code || res.Kind != "permission" {
		t.Errorf("%s: code %q kind %q, want %s, permission", op, res.Code, res.Kind, code)
	}
	return res
}

// wantReadOnly fails t unless the principal of rep could list and read
// metadata but both writes (put, put-if-absent) were denied with code, and
// returns the results of the two writes.
func wantReadOnly(t *testing.T, rep *validate.Report, code string) []validate.Result {
	t.Helper()
	want(t, rep, validate.LayerAuthorization, validate.OpList, validate.Pass)
	want(t, rep, validate.LayerAuthorization, validate.OpGetMetadata, validate.Pass)
	return []validate.Result{wantDenied(t, rep, validate.OpPut, code), wantDenied(t, rep, validate.OpPutIfAbsent, code)}
}

// snapshot lists every key of st with its version.
func snapshot(t *testing.T, st gateway.Store) map[string]gateway.Version {
	t.Helper()
	out := map[string]gateway.Version{}
	for a, err := range st.List(context.Background(), "") {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		out[a.Key] = a.Version
	}
	return out
}

// noProbeKeys fails when anything is left under _ckgate/preflight/.
func noProbeKeys(t *testing.T, st gateway.Store) {
	t.Helper()
	for a, err := range st.List(context.Background(), validate.PreflightPrefix) {
		if err != nil {
			t.Fatalf("list %s: %v", validate.PreflightPrefix, err)
		}
		t.Errorf("left behind: %s", a.Key)
	}
}

// TestAllPass: with the store's own full credentials every probe passes
// (identity may be unknown where the emulator has no identity service),
// the existing metadata is read, nothing outside _ckgate/preflight/ is
// written and the probe keys are gone afterwards.
func TestAllPass(t *testing.T) {
	each(t, func(t *testing.T, k *kind) {
		raw := k.newURL(t)
		st := admin(t, raw)
		ctx := context.Background()
		if _, err := st.Put(ctx, "metadata", []byte(`{"id":"q-1"}`), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, "offsets/0", []byte("v1\n{}\n"), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, st)

		rep := run(t, raw, validate.Options{})
		if !rep.OK {
			t.Fatalf("not ok:\n%s", dump(rep))
		}
		for _, res := range rep.Results {
			switch {
			case res.Result == validate.Pass:
			case res.Result == validate.Unknown && res.Layer == validate.LayerIdentity && k.name != "file" && k.name != "azure":
			case res.Result == validate.Unknown && res.Layer == validate.LayerInfo:
			default:
				t.Errorf("%s/%s = %s: %s", res.Layer, res.Operation, res.Result, res.Message)
			}
		}
		for _, op := range []string{validate.OpList, validate.OpGetMetadata, validate.OpPut, validate.OpPutIfAbsent,
			validate.OpPutIfMatch, validate.OpGet, validate.OpDelete} {
			want(t, rep, validate.LayerAuthorization, op, validate.Pass)
		}
		if res := want(t, rep, validate.LayerAuthorization, validate.OpGetMetadata, validate.Pass); !strings.Contains(res.Message, "12 bytes") {
			t.Errorf("get metadata: %q, want the 12 bytes of the existing file", res.Message)
		}
		want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass)
		if !strings.HasPrefix(rep.ProbeKey, validate.PreflightPrefix) {
			t.Errorf("probe key %q is not under %s", rep.ProbeKey, validate.PreflightPrefix)
		}
		if rep.Principal == "" {
			t.Errorf("no principal:\n%s", dump(rep))
		}
		after := snapshot(t, st)
		if !maps.Equal(before, after) {
			t.Errorf("the store changed outside %s:\nbefore %v\nafter  %v", validate.PreflightPrefix, before, after)
		}
		noProbeKeys(t, st)
		var out bytes.Buffer
		for _, f := range validate.Formats {
			if err := validate.WriteReport(&out, rep, f); err != nil {
				t.Fatal(err)
			}
		}
		for _, secret := range secrets() {
			if strings.Contains(out.String(), secret) {
				t.Errorf("a report shows a secret")
			}
		}
		if k.name != "file" {
			want(t, rep, validate.LayerNetwork, validate.OpTCP, validate.Pass)
			want(t, rep, validate.LayerClock, validate.OpSkew, validate.Pass)
		}
	})
}

// TestCancelRemovesProbeKey: a run cancelled right after its first write
// (as Ctrl-C would) still removes every probe key, reports the
// interruption and returns the context's error.
func TestCancelRemovesProbeKey(t *testing.T) {
	each(t, func(t *testing.T, k *kind) {
		raw := k.newURL(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wrote atomic.Int32
		cancelAfterPut := func(s gateway.Store) gateway.Store {
			return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
				err := next(ctx)
				if c.Op == gateway.OpPut && err == nil {
					wrote.Add(1)
					cancel()
				}
				return err
			})
		}
		rep, err := validate.Run(ctx, raw, validate.Options{Wrap: cancelAfterPut})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
		if rep == nil {
			t.Fatal("no report")
		}
		if wrote.Load() == 0 {
			t.Fatalf("nothing was written before the cancel:\n%s", dump(rep))
		}
		skipped := 0
		for _, res := range rep.Results {
			if res.Result == validate.Skip {
				skipped++
			}
		}
		if skipped == 0 {
			t.Errorf("no probe was skipped after the cancel:\n%s", dump(rep))
		}
		want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass)
		noProbeKeys(t, admin(t, raw))
	})
}

// TestLostCASAnswer: the compare-and-swap write lands but its answer is
// lost (as a dropped response after the SDK's retries would). The write
// probe fails as unavailable; the read-back finds that write, not the one
// before it, and passes instead of calling the store stale.
func TestLostCASAnswer(t *testing.T) {
	each(t, func(t *testing.T, k *kind) {
		raw := k.newURL(t)
		var lost atomic.Int32
		loseCAS := func(s gateway.Store) gateway.Store {
			return gateway.Intercept(s, func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
				err := next(ctx)
				if c.Op == gateway.OpPut && c.Cond.Kind == gateway.CondIfMatch && err == nil && lost.Add(1) == 1 {
					return gateway.E("put", c.Key, gateway.ErrUnavailable, errors.New("the answer was lost"))
				}
				return err
			})
		}
		rep := run(t, raw, validate.Options{Wrap: loseCAS})
		if lost.Load() == 0 {
			t.Fatalf("no compare-and-swap landed:\n%s", dump(rep))
		}
		if res := want(t, rep, validate.LayerAuthorization, validate.OpPutIfMatch, validate.Fail); res.Kind != "unavailable" {
			t.Errorf("put-if-match kind %q, want unavailable", res.Kind)
		}
		if res := want(t, rep, validate.LayerAuthorization, validate.OpGet, validate.Pass); !strings.Contains(res.Message, "lost") {
			t.Errorf("get: %q, want the lost write named", res.Message)
		}
		want(t, rep, validate.LayerCleanup, validate.OpRemove, validate.Pass)
		noProbeKeys(t, admin(t, raw))
	})
}

// secrets are the emulators' secret keys, which no report may show.
func secrets() []string {
	var out []string
	if s3emu != nil {
		out = append(out, s3emu.SecretKey, s3second.SecretKey)
	}
	if azemu != nil {
		out = append(out, azemu.Key)
	}
	return out
}
