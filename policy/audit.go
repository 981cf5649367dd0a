package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/ckgate/ckgate/gateway"
)

// Severities of findings.
const (
	SeverityDeny    = "deny"
	SeverityWarn    = "warn"
	SeverityUnknown = "unknown"
)

// Finding is one audit result, as conftest reports them.
type Finding struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Severity string `json:"severity"`
	Resource string `json:"resource"`
	Msg      string `json:"msg"`
}

// LifecycleReader is implemented by stores that can read their bucket's
// lifecycle configuration live (S3 GetBucketLifecycleConfiguration, GCS
// bucket attributes, ...). It returns the configuration in the JSON shape
// ParseLifecycle reads.
type LifecycleReader interface {
	BucketLifecycle(ctx context.Context) ([]byte, error)
}

// AuditOptions configure Audit.
type AuditOptions struct {
	// OutageWindow is how long a query may stay stopped and still restart
	// from its checkpoint (default 72h).
	OutageWindow time.Duration
	// Buckets are configurations read from files (ParseLifecycle). A target
	// on a cloud store with none for its bucket has its lifecycle read
	// live when the store is a LifecycleReader, and is reported unknown
	// otherwise.
	Buckets []Bucket
	// KnownQueries are other queries' roots, added to data.ckgate.queries.
	KnownQueries []KnownQuery
	// SinkOwner, when set, reads the owner of the file sink at url (the
	// URL a checkpoint's plan names): its query id and checkpoint, both
	// "" when the sink has no owner record.
	SinkOwner func(ctx context.Context, url string) (queryID, checkpoint string, err error)
	// DeltaTables are the Delta tables to check against the checkpoints
	// that read them (audit --delta); DeltaSources, when set, returns the
	// table ids (reservoirId) the checkpoint at root of st reads.
	DeltaTables  []DeltaTableInfo
	DeltaSources func(ctx context.Context, st gateway.Store, root string) ([]string, error)
}

// DefaultOutageWindow is the outage window when none is given.
const DefaultOutageWindow = 72 * time.Hour

// Report is the outcome of Audit.
type Report struct {
	Targets           []string     `json:"targets"`
	OutageWindowHours int64        `json:"outage_window_hours"`
	Checkpoints       []Checkpoint `json:"checkpoints"`
	Buckets           []Bucket     `json:"buckets"`
	Findings          []Finding    `json:"findings"`
}

// Count returns how many findings have severity sev.
func (r *Report) Count(sev string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == sev {
			n++
		}
	}
	return n
}

// Failed reports whether the audit fails: any deny or unknown finding, or
// a warning when failOnWarn.
func (r *Report) Failed(failOnWarn bool) bool {
	return r.Count(SeverityDeny) > 0 || r.Count(SeverityUnknown) > 0 || (failOnWarn && r.Count(SeverityWarn) > 0)
}

// Audit discovers the checkpoints of every target, gathers the bucket
// configurations and evaluates the audit rules once over all of them. It
// returns an error only when it could not audit (a target that cannot be
// listed, a policy that cannot be evaluated).
func (e *Engine) Audit(ctx context.Context, targets []Target, o AuditOptions) (*Report, error) {
	if o.OutageWindow <= 0 {
		o.OutageWindow = DefaultOutageWindow
	}
	rep := &Report{
		OutageWindowHours: int64(o.OutageWindow / time.Hour),
		Checkpoints:       []Checkpoint{},
		Buckets:           append([]Bucket{}, o.Buckets...),
		Findings:          []Finding{},
	}
	for _, t := range targets {
		rep.Targets = append(rep.Targets, displayURL(t.URL))
		cps, err := Discover(ctx, t)
		if err != nil {
			return nil, err
		}
		if o.SinkOwner != nil {
			for _, cp := range cps {
				if sk := cp.Sink; sk != nil {
					if sk.OwnerQueryID, sk.OwnerCheckpoint, err = o.SinkOwner(ctx, sk.URL); err != nil {
						sk.Error = err.Error()
					}
				}
			}
		}
		if o.DeltaSources != nil && len(o.DeltaTables) > 0 {
			for i := range cps {
				ids, err := o.DeltaSources(ctx, t.Store, cps[i].Root)
				if err != nil {
					cps[i].Error = err.Error()
					continue
				}
				cps[i].DeltaSources = ids
			}
		}
		rep.Checkpoints = append(rep.Checkpoints, cps...)
		if b, ok := liveBucket(ctx, t, rep.Buckets); ok {
			rep.Buckets = append(rep.Buckets, b)
		}
	}
	input := map[string]any{
		"outage_window_hours": rep.OutageWindowHours,
		"checkpoints":         rep.Checkpoints,
		"buckets":             rep.Buckets,
		"known_queries":       o.KnownQueries,
		"delta_tables":        append([]DeltaTableInfo{}, o.DeltaTables...),
	}
	findings, err := e.evalAudit(ctx, input)
	if err != nil {
		return nil, err
	}
	rep.Findings = findings
	return rep, nil
}

// liveBucket reads the lifecycle configuration of t's bucket from the store
// when no file gave one. A cloud store that cannot read it yields an
// unknown (a Bucket with Error); a local directory has none.
func liveBucket(ctx context.Context, t Target, have []Bucket) (Bucket, bool) {
	u, err := gateway.ParseURL(t.URL)
	if err != nil || u.Scheme == "file" {
		return Bucket{}, false
	}
	bucket, _, _ := Location(t.URL)
	provider := map[string]string{"s3": "s3", "gs": "gcs", "az": "azure", "azure": "azure"}[u.Scheme]
	for _, b := range have {
		if (b.Bucket == "" || b.Bucket == bucket) && (b.Provider == "" || b.Provider == provider) {
			return Bucket{}, false // a file covers it
		}
	}
	source := displayURL(t.URL)
	lr, ok := gateway.As[LifecycleReader](t.Store)
	if !ok {
		return Bucket{Bucket: bucket, Provider: provider, Source: source, Rules: []LifecycleRule{},
			Error: "this store cannot read its bucket's lifecycle configuration; pass it with --lifecycle FILE"}, true
	}
	data, err := lr.BucketLifecycle(ctx)
	if err != nil {
		return Bucket{Bucket: bucket, Provider: provider, Source: source, Rules: []LifecycleRule{}, Error: err.Error()}, true
	}
	b, err := ParseLifecycle(source, data)
	if err != nil {
		return Bucket{Bucket: bucket, Provider: provider, Source: source, Rules: []LifecycleRule{}, Error: err.Error()}, true
	}
	if b.Bucket == "" {
		b.Bucket = bucket
	}
	return b, true
}

// evalAudit evaluates data.ckgate.audit.findings on input.
func (e *Engine) evalAudit(ctx context.Context, input map[string]any) ([]Finding, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("audit input: %w", err)
	}
	v, err := ast.ValueFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("audit input: %w", err)
	}
	rs, err := e.audit.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		return nil, fmt.Errorf("audit: policy evaluation failed: %w", err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, fmt.Errorf("audit: %w", ErrUndefined)
	}
	b, err := json.Marshal(rs[0].Expressions[0].Value)
	if err != nil {
		return nil, fmt.Errorf("audit result: %w", err)
	}
	var fs []Finding
	if err := json.Unmarshal(b, &fs); err != nil {
		return nil, fmt.Errorf("audit result: findings are not a set of {id, severity, resource, msg}: %w", err)
	}
	for i, f := range fs {
		if f.ID == "" || f.Msg == "" {
			return nil, fmt.Errorf("audit result: finding %d without an id or a message", i)
		}
		switch f.Severity {
		case SeverityDeny, SeverityWarn, SeverityUnknown:
		default:
			// A severity the report does not know must not pass silently.
			fs[i].Severity = SeverityUnknown
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Msg < b.Msg
	})
	if fs == nil {
		fs = []Finding{}
	}
	return fs, nil
}
