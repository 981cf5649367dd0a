package compat

import (
	"strings"
	"testing"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/spec"
)

// TestHTTPSinkURLCompared: the plan of a spec and of a recorded engine plan
// name an http sink by its redacted URL and the SHA-256 of the full one;
// a plan of the old form (a secret kept by the old redactor, no hash) is
// shown redacted and compares equal to the same URL; a URL that differs
// only in a hidden value is a change of sink.url_sha256; another endpoint
// a change of sink.url.
func TestHTTPSinkURLCompared(t *testing.T) {
	const full = "https://f.example/api/h?code=SECRET1&x=1#access_token=SECRET2"
	specOf := func(u string) *Plan {
		s := &spec.Spec{Name: "q", Sink: spec.Sink{Kind: spec.SinkHTTP, URL: u}}
		p, err := FromSpec(s, SpecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	prop := specOf(full)
	if strings.Contains(prop.Sink.URL, "SECRET") || prop.Sink.URLSHA256 == "" {
		t.Fatalf("the spec's sink: %+v", prop.Sink)
	}
	recordedOf := func(id map[string]string) *Recorded {
		return &Recorded{Plan: FromEnginePlan(&checkpoint.EnginePlan{Version: 1, Sink: id}), Writer: WriterCkgate}
	}
	changes := func(rec *Recorded, p *Plan) []string {
		var out []string
		for _, c := range Compare(rec, p).Changes {
			if strings.HasPrefix(c.Field, "sink.") {
				out = append(out, c.Field)
				if strings.Contains(c.Recorded+c.Proposed+c.Reason, "SECRET") {
					t.Errorf("a change shows a secret: %+v", c)
				}
			}
		}
		return out
	}
	current := recordedOf(map[string]string{"kind": "http", "url": prop.Sink.URL, "url_sha256": prop.Sink.URLSHA256})
	if got := changes(current, prop); len(got) != 0 {
		t.Errorf("the same URL: changes %v", got)
	}
	old := recordedOf(map[string]string{"kind": "http", "url": "https://f.example/api/h?code=SECRET1&x=1#access_token=SECRET2"})
	if strings.Contains(old.Sink.URL, "SECRET") {
		t.Errorf("an old plan's sink is shown as %q", old.Sink.URL)
	}
	if got := changes(old, prop); len(got) != 0 {
		t.Errorf("an old plan of the same URL: changes %v", got)
	}
	if got := changes(current, specOf(strings.Replace(full, "SECRET1", "SECRET3", 1))); len(got) != 1 || got[0] != "sink.url_sha256" {
		t.Errorf("a rotated code=: changes %v, want sink.url_sha256", got)
	}
	if got := changes(current, specOf(strings.Replace(full, "f.example", "g.example", 1))); len(got) != 1 || got[0] != "sink.url" {
		t.Errorf("another host: changes %v, want sink.url", got)
	}
}
