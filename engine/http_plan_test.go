package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine"
	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/gateway"
)

// checkpointShows fails the test when any key or object of the checkpoint
// holds "SECRET".
func checkpointShows(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	for a, err := range w.CP.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := w.CP.Get(ctx, a.Key)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(a.Key+"\n"+string(data), "SECRET"); i >= 0 {
			t.Errorf("%s holds a secret: %s", a.Key, data)
		}
	}
}

func recordedSink(t *testing.T, w *world) map[string]string {
	t.Helper()
	data, _, err := w.CP.Get(context.Background(), checkpoint.PlanKey)
	if err != nil {
		t.Fatal(err)
	}
	var p checkpoint.EnginePlan
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	return p.Sink
}

// TestHTTPSinkPlanHasNoSecret: an http sink URL with secrets in its query
// (an Azure Functions code=, auth=, pwd=, an unknown x=) and fragment is
// recorded redacted with the SHA-256 of the full URL; progress events do
// not show it; a restart with the same URL runs, one that differs only in
// a hidden value is refused without showing either.
func TestHTTPSinkPlanHasNoSecret(t *testing.T) {
	files := genEvents(2, 4, 10)
	rc := &receiver{got: map[string][]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	full := srv.URL + "/hook?code=SECRETCODE1&x=1&auth=SECRETAUTH&pwd=SECRETPWD#access_token=SECRETFRAG"
	w := inputWorld(t, files)
	ps, err := runAll(context.Background(), mustSpec(t, strings.Replace(httpSpecTmpl, "%s", full, 1)), w.Options(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("no batch ran")
	}
	for _, p := range ps {
		if strings.Contains(p.Sink.Description, "SECRET") {
			t.Errorf("a progress event shows a secret: %s", p.Sink.Description)
		}
	}
	checkpointShows(t, w)
	got := recordedSink(t, w)
	wantURL := srv.URL + "/hook?code=REDACTED&x=REDACTED&auth=REDACTED&pwd=REDACTED#REDACTED"
	if got["url"] != wantURL || got[sink.URLHashKey] != sink.URLHash(full) {
		t.Errorf("recorded sink %v, want url %s and the URL's hash", got, wantURL)
	}
	if _, err := runAll(context.Background(), mustSpec(t, strings.Replace(httpSpecTmpl, "%s", full, 1)), w.Options(nil, 2)); err != nil {
		t.Fatalf("a restart with the same URL: %v", err)
	}
	other := strings.Replace(full, "SECRETCODE1", "SECRETCODE2", 1)
	_, err = runAll(context.Background(), mustSpec(t, strings.Replace(httpSpecTmpl, "%s", other, 1)), w.Options(nil, 3))
	if !errors.Is(err, engine.ErrIncompatible) || !strings.Contains(err.Error(), "hidden part") {
		t.Fatalf("a restart with another code=: %v, want the sink refused for a hidden part", err)
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the refusal shows a secret: %v", err)
	}
}

// TestHTTPSinkOldPlanRewritten: a plan written before the allowlist
// redactor (its sink URL redacted by a list of names, so that code= and
// x= were kept, the query re-encoded in name order, no hash) is still
// read: a restart with the same URL runs and writes the plan again without
// the secret and with the URL's hash.
func TestHTTPSinkOldPlanRewritten(t *testing.T) {
	files := genEvents(2, 4, 10)
	rc := &receiver{got: map[string][]string{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	full := srv.URL + "/hook?x=1&token=SECRETTOKEN&code=SECRETCODE1"
	w := newWorld()
	writeEvents(t, w, "in", files[:1])
	specText := strings.Replace(httpSpecTmpl, "%s", full, 1)
	if _, err := runAll(context.Background(), mustSpec(t, specText), w.Options(nil, 1)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data, v, err := w.CP.Get(ctx, checkpoint.PlanKey)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	p["sink"] = map[string]string{"kind": "http", "url": srv.URL + "/hook?code=SECRETCODE1&token=REDACTED&x=1"}
	old, _ := json.MarshalIndent(p, "", "  ")
	if _, err := w.CP.Put(ctx, checkpoint.PlanKey, old, gateway.IfMatch(v)); err != nil {
		t.Fatal(err)
	}
	writeEvents(t, w, "in", files)
	if _, err := runAll(ctx, mustSpec(t, specText), w.Options(nil, 2)); err != nil {
		t.Fatalf("a restart on a plan of the old form: %v", err)
	}
	checkpointShows(t, w)
	if got := recordedSink(t, w); got[sink.URLHashKey] != sink.URLHash(full) {
		t.Errorf("the plan was not written again in the current form: %v", got)
	}
}
