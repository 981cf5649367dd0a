package policy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
	"github.com/ckgate/ckgate/gateway/sessiontest"
	"github.com/ckgate/ckgate/gateway/storetest"
	"github.com/ckgate/ckgate/policy"
)

const root = "s3://bucket/team/q1"

// seeded returns a memstore holding a committed batch 0 of query q1.
func seeded(t testing.TB) gateway.Store {
	t.Helper()
	ctx := context.Background()
	s := memstore.New()
	for _, k := range []string{"metadata", "offsets/0", "commits/0", "state/0/0/1.delta"} {
		if _, err := s.Put(ctx, k, []byte(`{"id":"q1"}`), gateway.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func wantRule(t *testing.T, err error, rule string) {
	t.Helper()
	if rule == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("err = %v, want ErrDenied by %s", err, rule)
	}
	var de *policy.DeniedError
	if !errors.As(err, &de) || !slices.Contains(de.Rules(), rule) {
		t.Fatalf("err = %v, want a *DeniedError by %s", err, rule)
	}
	if !strings.Contains(err.Error(), rule) {
		t.Fatalf("message %q does not name %s", err, rule)
	}
}

func TestAuthorizerDefaultRules(t *testing.T) {
	e := engine(t, policy.Options{})
	job := policy.Principal{ID: "svc-q1", Kind: policy.KindJob}
	plan := &policy.Plan{ID: "p1", Obsolete: map[string]string{"offsets/0": "before retain_from 1"}}
	for _, tc := range []struct {
		name string
		p    policy.Principal
		op   gateway.Op
		key  string
		cond gateway.Cond
		opts []policy.AuthorizerOption
		rule string // "" allowed
	}{
		{"job creates an entry", job, gateway.OpPut, "offsets/1", gateway.IfAbsent(), nil, ""},
		{"job writes state", job, gateway.OpPut, "state/0/0/2.delta", gateway.None(), nil, ""},
		{"job deletes own garbage", job, gateway.OpDelete, "state/0/0/1.delta", gateway.None(), nil, ""},
		{"job deletes offsets", job, gateway.OpDelete, "offsets/0", gateway.None(), nil, "CKG-P002"},
		{"job deletes commits", job, gateway.OpDelete, "commits/0", gateway.None(), nil, "CKG-P002"},
		{"job overwrites commits", job, gateway.OpPut, "commits/0", gateway.None(), nil, "CKG-P003"},
		{"job CAS on offsets", job, gateway.OpPut, "offsets/0", gateway.IfMatch("v"), nil, "CKG-P003"},
		{"housekeeping deletes state", policy.Principal{ID: "cron", Kind: policy.KindHousekeeping}, gateway.OpDelete, "state/0/0/1.delta", gateway.None(), nil, "CKG-P004"},
		{"unknown kind deletes", policy.Principal{ID: "bob"}, gateway.OpDelete, "metadata", gateway.None(), nil, "CKG-P004"},
		{"retention deletes planned key", policy.Principal{ID: "ret", Kind: policy.KindRetention}, gateway.OpDelete, "offsets/0", gateway.None(), []policy.AuthorizerOption{policy.WithPlan(plan)}, ""},
		{"retention deletes unplanned key", policy.Principal{ID: "ret", Kind: policy.KindRetention}, gateway.OpDelete, "commits/0", gateway.None(), []policy.AuthorizerOption{policy.WithPlan(plan)}, "CKG-P005"},
		{"retention without plan", policy.Principal{ID: "ret", Kind: policy.KindRetention}, gateway.OpDelete, "offsets/0", gateway.None(), nil, "CKG-P005"},
		{"admin without reason", policy.Principal{ID: "alice", Kind: policy.KindAdmin}, gateway.OpDelete, "offsets/0", gateway.None(), nil, "CKG-P004"},
		{"housekeeping creates a commit", policy.Principal{ID: "cron", Kind: policy.KindHousekeeping}, gateway.OpPut, "commits/5", gateway.IfAbsent(), nil, "CKG-P006"},
		{"retention creates offsets", policy.Principal{ID: "ret", Kind: policy.KindRetention}, gateway.OpPut, "offsets/5", gateway.IfAbsent(), nil, "CKG-P006"},
		{"job outside its session creates a commit", job, gateway.OpPut, "commits/5", gateway.IfAbsent(), []policy.AuthorizerOption{}, "CKG-P006"},
		{"housekeeping plants metadata in offsets/", policy.Principal{ID: "cron", Kind: policy.KindHousekeeping}, gateway.OpPut, "offsets/metadata", gateway.IfAbsent(), nil, "CKG-P007"},
		{"archive creates an entry", policy.Principal{ID: "arch", Kind: policy.KindArchive}, gateway.OpPut, "offsets/5", gateway.IfAbsent(), nil, ""},
		{"archive overwrites", policy.Principal{ID: "arch", Kind: policy.KindArchive}, gateway.OpPut, "state/0/0/1.delta", gateway.None(), nil, "CKG-P008"},
		{"archive deletes", policy.Principal{ID: "arch", Kind: policy.KindArchive}, gateway.OpDelete, "state/0/0/1.delta", gateway.None(), nil, "CKG-P008"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			raw := seeded(t)
			before := storetest.Keys(t, raw, "")
			opts := tc.opts
			if tc.p.Kind == policy.KindJob && opts == nil {
				opts = []policy.AuthorizerOption{policy.WithWriterSession()} // the engine's writes
			}
			a := policy.NewAuthorizer(e, tc.p, root, policy.Facts{QueryID: "q1"}, nil, opts...)
			s := gateway.WithAuthorizer(raw, a)
			var err error
			if tc.op == gateway.OpPut {
				_, err = s.Put(ctx, tc.key, []byte("x"), tc.cond)
				if errors.Is(err, gateway.ErrPrecondition) {
					err = nil // allowed by policy; the stale version is the store's answer
				}
			} else {
				err = s.Delete(ctx, tc.key, tc.cond)
			}
			wantRule(t, err, tc.rule)
			if tc.rule != "" && !slices.Equal(storetest.Keys(t, raw, ""), before) {
				t.Fatalf("a refused %s changed the store", tc.op)
			}
		})
	}
}

func TestAuthorizerOutsideRoot(t *testing.T) {
	e := engine(t, policy.Options{})
	a := policy.NewAuthorizer(e, policy.Principal{ID: "svc-q1", Kind: policy.KindJob}, root, policy.Facts{QueryID: "q1"}, nil,
		policy.WithStoreURL("s3://bucket"), policy.WithWriterSession())
	s := gateway.WithAuthorizer(memstore.New(), a)
	ctx := context.Background()
	if _, err := s.Put(ctx, "team/q1/offsets/0", []byte("x"), gateway.IfAbsent()); err != nil {
		t.Fatalf("inside the root: %v", err)
	}
	_, err := s.Put(ctx, "team/q10/offsets/0", []byte("x"), gateway.IfAbsent())
	wantRule(t, err, "CKG-P001")
	_, err = s.Put(ctx, "team/q1", []byte("x"), gateway.IfAbsent())
	wantRule(t, err, "CKG-P001")
}

func TestAuthorizerWithExists(t *testing.T) {
	e := engine(t, policy.Options{})
	ctx := context.Background()
	raw := seeded(t)
	job := policy.Principal{ID: "svc-q1", Kind: policy.KindJob}
	plain := gateway.WithAuthorizer(raw, policy.NewAuthorizer(e, job, root, policy.Facts{}, nil, policy.WithWriterSession()))
	_, err := plain.Put(ctx, "offsets/1", []byte("x"), gateway.None())
	wantRule(t, err, "CKG-P003") // existence unknown: counted as an overwrite
	stat := gateway.WithAuthorizer(raw, policy.NewAuthorizer(e, job, root, policy.Facts{}, nil, policy.WithExists(raw), policy.WithWriterSession()))
	if _, err := stat.Put(ctx, "offsets/1", []byte("x"), gateway.None()); err != nil {
		t.Fatalf("unconditional create of an absent entry: %v", err)
	}
	_, err = stat.Put(ctx, "offsets/1", []byte("y"), gateway.None())
	wantRule(t, err, "CKG-P003")
}

// racingStore answers a Stat of key "absent" and then, before the caller
// can write, lets another writer create it: the check-then-write race.
type racingStore struct {
	gateway.Store
	key  string
	body []byte
}

func (r *racingStore) Stat(ctx context.Context, key string) (gateway.Attrs, error) {
	a, err := r.Store.Stat(ctx, key)
	if key == r.key && errors.Is(err, gateway.ErrNotFound) {
		if _, perr := r.Store.Put(ctx, key, r.body, gateway.IfAbsent()); perr != nil {
			panic(perr)
		}
	}
	return a, err
}

// TestAuthorizerWritesWhatItDecidedOn: an unconditional put decided on an
// absent log entry is written create-only, so the entry another writer
// created meanwhile stays; one decided on version v is written if-match v.
func TestAuthorizerWritesWhatItDecidedOn(t *testing.T) {
	e := engine(t, policy.Options{})
	ctx := context.Background()
	raw := &racingStore{Store: memstore.New(), key: "offsets/50", body: []byte("the job's entry")}
	a := policy.NewAuthorizer(e, policy.Principal{ID: "svc-q1", Kind: policy.KindJob}, root, policy.Facts{}, nil,
		policy.WithExists(raw), policy.WithWriterSession())
	s := gateway.WithAuthorizer(raw, a)
	_, err := s.PutStream(ctx, "offsets/50", strings.NewReader("overwrite"), gateway.None())
	if !errors.Is(err, gateway.ErrExists) {
		t.Fatalf("put after the race: %v, want ErrExists", err)
	}
	if got, _, _ := raw.Get(ctx, "offsets/50"); string(got) != "the job's entry" {
		t.Fatalf("offsets/50 = %q: the concurrent entry was replaced", got)
	}
	cond, err := a.Authorize(ctx, gateway.Call{Op: gateway.OpPut, Key: "offsets/51", Cond: gateway.None()})
	if err != nil || cond.Kind != gateway.CondIfAbsent {
		t.Fatalf("absent entry: cond %v, %v; want if-absent", cond, err)
	}
}

// TestSessionThroughAuthorizer: a job's single-writer session commits
// batches through the policy; the same job cannot rewrite its history.
func TestSessionThroughAuthorizer(t *testing.T) {
	ctx := context.Background()
	e := engine(t, policy.Options{})
	var log bytes.Buffer
	dl := policy.NewDecisionLog(&log)
	st := gateway.WithAuthorizer(memstore.New(), policy.NewAuthorizer(e, policy.Principal{ID: "svc", Kind: policy.KindJob},
		"file:///ckpt/q", policy.Facts{QueryID: "sessiontest-query"}, dl, policy.WithWriterSession()))
	sess, err := gateway.OpenSession(ctx, st, sessiontest.Options(1))
	if err != nil {
		t.Fatal(err)
	}
	for n := range 3 {
		if err := sessiontest.Batch(ctx, sess, n); err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
	}
	if err := sess.Store().Delete(ctx, "commits/1", gateway.None()); !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("delete commits/1: %v", err)
	}
	if _, err := sess.Store().Put(ctx, "offsets/2", []byte("x"), gateway.None()); !errors.Is(err, gateway.ErrDenied) {
		t.Fatalf("overwrite offsets/2: %v", err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs := records(t, &log)
	// open: writer create; 3 batches x 2 entries; 2 refusals; close: writer CAS
	if len(recs) != 1+6+2+1 {
		t.Fatalf("%d decisions logged, want 10:\n%s", len(recs), log.String())
	}
	denied := 0
	for _, r := range recs {
		if r.Result == "deny" {
			denied++
		}
	}
	if denied != 2 {
		t.Fatalf("%d denials logged, want 2", denied)
	}
}

func records(t *testing.T, log *bytes.Buffer) []policy.DecisionRecord {
	t.Helper()
	var out []policy.DecisionRecord
	sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
	for sc.Scan() {
		var r policy.DecisionRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decision log line %q: %v", sc.Text(), err)
		}
		if r.DecisionID == "" || r.Time.IsZero() || r.Action == "" || (r.Result != "allow" && r.Result != "deny") {
			t.Fatalf("incomplete decision log line %q", sc.Text())
		}
		out = append(out, r)
	}
	return out
}

func TestDecisionLogRecordsDenial(t *testing.T) {
	e := engine(t, policy.Options{})
	var log bytes.Buffer
	a := policy.NewAuthorizer(e, policy.Principal{ID: "AKIAIOSFODNN7EXAMPLE", Kind: policy.KindHousekeeping},
		"az://acct/ckpt/q1?sig=s3cr3t&se=2030", policy.Facts{QueryID: "q1"}, policy.NewDecisionLog(&log))
	err := gateway.WithAuthorizer(seeded(t), a).Delete(context.Background(), "offsets/0", gateway.None())
	wantRule(t, err, "CKG-P004")
	recs := records(t, &log)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Result != "deny" || !slices.Equal(r.Rules, []string{"CKG-P004"}) || r.Key != "offsets/0" || r.Action != "delete" ||
		r.Principal.Kind != "housekeeping" || r.QueryID != "q1" || len(r.Messages) != 1 {
		t.Fatalf("record %+v", r)
	}
	var de *policy.DeniedError
	if !errors.As(err, &de) || de.DecisionID != r.DecisionID {
		t.Fatalf("the error's decision id %q is not the logged %q", de.DecisionID, r.DecisionID)
	}
	if strings.Contains(log.String(), "s3cr3t") || strings.Contains(log.String(), "AKIAIOSFODNN7EXAMPLE") {
		t.Fatalf("secret in the decision log: %s", log.String())
	}
}

func TestBreakGlass(t *testing.T) {
	e := engine(t, policy.Options{})
	ctx := context.Background()
	admin := policy.Principal{ID: "alice", Kind: policy.KindAdmin, Reason: "INC-42: offsets/0 is corrupt, token=abc123"}

	var log bytes.Buffer
	raw := seeded(t)
	a := policy.NewAuthorizer(e, admin, root, policy.Facts{QueryID: "q1"}, policy.NewDecisionLog(&log))
	if err := gateway.WithAuthorizer(raw, a).Delete(ctx, "offsets/0", gateway.None()); err != nil {
		t.Fatalf("break glass with a reason: %v", err)
	}
	if _, _, err := raw.Get(ctx, "offsets/0"); !errors.Is(err, gateway.ErrNotFound) {
		t.Fatalf("offsets/0 still there: %v", err)
	}
	recs := records(t, &log)
	if len(recs) != 1 || !recs[0].BreakGlass || recs[0].Result != "allow" || !slices.Equal(recs[0].Rules, []string{"CKG-P004"}) ||
		!strings.HasPrefix(recs[0].Reason, "INC-42") || strings.Contains(recs[0].Reason, "abc123") {
		t.Fatalf("break glass record %+v", recs)
	}

	// Without a decision log there is no record: refused.
	a = policy.NewAuthorizer(e, admin, root, policy.Facts{QueryID: "q1"}, nil)
	err := gateway.WithAuthorizer(seeded(t), a).Delete(ctx, "offsets/0", gateway.None())
	wantRule(t, err, policy.RuleFailClosed)

	// A log that cannot be written: refused.
	a = policy.NewAuthorizer(e, admin, root, policy.Facts{QueryID: "q1"}, policy.NewDecisionLog(failingWriter{}))
	err = gateway.WithAuthorizer(seeded(t), a).Delete(ctx, "offsets/0", gateway.None())
	wantRule(t, err, policy.RuleFailClosed)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDecisionLogWriteErrorKept(t *testing.T) {
	l := policy.NewDecisionLog(failingWriter{})
	if err := l.Record(policy.DecisionRecord{Action: "put", Result: "allow"}); err == nil {
		t.Fatal("no error")
	}
	if l.Err() == nil {
		t.Fatal("the write error was not kept")
	}
	var nilLog *policy.DecisionLog
	if err := nilLog.Record(policy.DecisionRecord{}); err != nil || nilLog.Err() != nil {
		t.Fatal("a nil log must log nothing")
	}
}

// TestDecisionLogMasks: every text field of a decision record is written
// redacted (gateway.Redact): URL user info and query values, key ids,
// tokens, account keys.
func TestDecisionLogMasks(t *testing.T) {
	for in, want := range map[string]string{
		"offsets/0":                        "offsets/0",
		"AKIAIOSFODNN7EXAMPLE":             "****MPLE",
		"az://acct/c/p?sig=abc%2F&se=2030": "az://acct/c/p?sig=REDACTED&se=REDACTED",
		"https://f.example/api?code=abc":   "https://f.example/api?code=REDACTED",
		"s3://user:pass@host/b":            "s3://REDACTED@host/b",
		"password = hunter2 ok":            "password = REDACTED ok",
		"Bearer eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4f":                 "Bearer REDACTED",
		"ya29.a0AfH6SMBxxxxxxxxxxxx":                                                   "REDACTED",
		"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==;": "AccountKey=REDACTED;",
	} {
		var buf bytes.Buffer
		l := policy.NewDecisionLog(&buf)
		r := policy.DecisionRecord{Action: "put", Result: "deny", Principal: policy.Principal{ID: in, Reason: in},
			Key: in, Path: in, Root: in, Reason: in, Error: in, Messages: []string{in}}
		if err := l.Record(r); err != nil {
			t.Fatal(err)
		}
		var got policy.DecisionRecord
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		for field, v := range map[string]string{"principal.id": got.Principal.ID, "principal.reason": got.Principal.Reason,
			"key": got.Key, "path": got.Path, "root": got.Root, "reason": got.Reason, "error": got.Error, "message": got.Messages[0]} {
			if v != want {
				t.Errorf("%s of %q logged as %q, want %q", field, in, v, want)
			}
		}
	}
}
