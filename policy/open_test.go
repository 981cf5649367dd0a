package policy_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/policy"
)

func TestCheckOpen(t *testing.T) {
	e := engine(t, policy.Options{Data: map[string]any{"ckgate": map[string]any{
		"queries": []any{map[string]any{"query_id": "q1", "root": "s3://b/team/q1"}},
	}}})
	job := policy.Principal{ID: "svc", Kind: policy.KindJob}
	for _, tc := range []struct {
		name, root, query, metadata string
		known                       []policy.KnownQuery
		rule                        string
	}{
		{"new checkpoint", "s3://b/team/q2", "q2", "", nil, ""},
		{"own checkpoint", "s3://b/team/q1", "q1", `{"id":"q1"}`, nil, ""},
		{"another query's metadata", "s3://b/team/q2", "q2", `{"id":"q9"}`, nil, "CKG-P010"},
		{"equal to a known root", "s3://b/team/q1", "q2", "", nil, "CKG-P011"},
		{"inside a known root", "s3://b/team/q1/x", "q2", "", nil, "CKG-P011"},
		{"above a known root", "s3://b/team", "q2", "", nil, "CKG-P011"},
		{"inside a root known by the caller", "s3://b/other/q3/y", "q2", "", []policy.KnownQuery{{QueryID: "q3", Root: "s3://b/other/q3"}}, "CKG-P011"},
		{"no query id", "s3://b/team/q2", "", "", nil, "CKG-P012"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memstore.New()
			if tc.metadata != "" {
				if _, err := s.Put(context.Background(), "metadata", []byte(tc.metadata), gateway.IfAbsent()); err != nil {
					t.Fatal(err)
				}
			}
			var log bytes.Buffer
			err := policy.CheckOpen(context.Background(), e, s, policy.OpenRequest{Principal: job, Root: tc.root, QueryID: tc.query, KnownQueries: tc.known}, policy.NewDecisionLog(&log))
			wantRule(t, err, tc.rule)
			recs := records(t, &log)
			if len(recs) != 1 || recs[0].Action != "open" {
				t.Fatalf("decision log %q", log.String())
			}
		})
	}
}

func TestCheckOpenUnreadableMetadata(t *testing.T) {
	e := engine(t, policy.Options{})
	s := memstore.New()
	if _, err := s.Put(context.Background(), "metadata", []byte("not json"), gateway.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	err := policy.CheckOpen(context.Background(), e, s, policy.OpenRequest{Root: "r", QueryID: "q"}, nil)
	if !errors.Is(err, gateway.ErrInvalidKey) || errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("err = %v, want ErrInvalidKey naming metadata", err)
	}
	failing := gateway.Intercept(memstore.New(), func(ctx context.Context, c gateway.Call, next func(context.Context) error) error {
		return gateway.E(string(c.Op), c.Key, gateway.ErrUnavailable, nil)
	})
	if err := policy.CheckOpen(context.Background(), e, failing, policy.OpenRequest{Root: "r", QueryID: "q"}, nil); !errors.Is(err, gateway.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}
