package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// PlanFileKind names a retention plan file (`retention plan --out FILE`).
const PlanFileKind = "ckgate-retention-plan"

// MaxPlanFileBytes bounds a plan file (about a million planned removals).
const MaxPlanFileBytes = 256 << 20

var (
	// ErrPlanFile: a plan file that cannot be read as one.
	ErrPlanFile = errors.New("not a retention plan")
	// ErrPlanStale: the checkpoint changed since the plan was made in a way
	// that makes it unsafe to apply as reviewed. A *StaleError is it and
	// gateway.ErrPrecondition.
	ErrPlanStale = errors.New("the checkpoint changed since the plan was made")
)

// PlanFile is a reviewed retention plan, written by `retention plan --out`
// and applied exactly by `retention apply --plan`.
type PlanFile struct {
	Kind    string    `json:"kind"`
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	// RetentionPolicy is what the plan was made with; apply re-plans with it to
	// check that every planned removal is still safe.
	Policy     PlanPolicy   `json:"policy"`
	Checkpoint PlanTarget   `json:"checkpoint"`
	Sinks      []PlanTarget `json:"sinks,omitempty"`
}

// PlanPolicy is RetentionPolicy as a plan file records it.
type PlanPolicy struct {
	MinBatches   int   `json:"min_batches"`
	RetainForMs  int64 `json:"retain_for_ms"`
	LogRetention int64 `json:"log_retention_ms"`
}

// Policy returns the planner's policy at now.
func (p PlanPolicy) Policy(now time.Time) RetentionPolicy {
	return RetentionPolicy{MinBatches: p.MinBatches, RetainFor: time.Duration(p.RetainForMs) * time.Millisecond,
		LogRetention: time.Duration(p.LogRetention) * time.Millisecond, Now: now}
}

// PlanPolicyOf records p.
func PlanPolicyOf(p RetentionPolicy) PlanPolicy {
	return PlanPolicy{MinBatches: p.MinBatches, RetainForMs: p.RetainFor.Milliseconds(), LogRetention: p.LogRetention.Milliseconds()}
}

// PlanTarget is the plan of one root: the checkpoint, or a file sink's
// output directory.
type PlanTarget struct {
	// URL is the root as given (secrets redacted); Location is its
	// canonical location (gateway.CanonicalRoot).
	URL      string `json:"url"`
	Location string `json:"location"`
	// URLRedacted: URL had secrets hidden, so apply needs it given again.
	URLRedacted bool `json:"url_redacted,omitempty"`
	// QueryID is the checkpoint's (empty for a sink).
	QueryID       string `json:"query_id,omitempty"`
	LatestOffsets *int64 `json:"latest_offsets_batch"`
	LatestCommit  *int64 `json:"latest_commit_batch"`
	RetainFrom    *int64 `json:"retain_from"`
	// Remove is what the plan deletes, in the order it deletes (SortSafe).
	Remove       []PlannedRemoval `json:"remove"`
	RemovedBytes int64            `json:"removed_bytes"`
}

// PlannedRemoval is one key the plan deletes, as it was when planned.
type PlannedRemoval struct {
	Key      string          `json:"key"`
	Size     int64           `json:"size"`
	Version  gateway.Version `json:"version,omitempty"`
	Modified time.Time       `json:"modified,omitzero"`
	Reason   string          `json:"reason"`
}

// NewPlanTarget records r, planned on the listing l, for the root at url.
func NewPlanTarget(url, location, queryID string, l Listing, r *RetentionResult) PlanTarget {
	attrs := make(map[string]gateway.Attrs, len(l.Objects))
	for _, o := range l.Objects {
		attrs[o.Key] = o
	}
	t := PlanTarget{URL: gateway.Redact(url), Location: location, URLRedacted: gateway.Redact(url) != url, QueryID: queryID,
		LatestOffsets: r.LatestOffsets, LatestCommit: r.LatestCommit, RetainFrom: r.RetainFrom,
		Remove: make([]PlannedRemoval, 0, len(r.Remove)), RemovedBytes: r.RemovedBytes}
	for _, d := range r.Remove {
		a := attrs[d.Key]
		t.Remove = append(t.Remove, PlannedRemoval{Key: d.Key, Size: d.Size, Version: a.Version, Modified: a.Modified.UTC(), Reason: d.Reason})
	}
	return t
}

// Result is the target's plan as ApplyRetention takes it: exactly the planned
// removals, in the planned order.
func (t PlanTarget) Result() *RetentionResult {
	r := &RetentionResult{LatestOffsets: t.LatestOffsets, LatestCommit: t.LatestCommit, RetainFrom: t.RetainFrom,
		Keep: []Decision{}, Remove: make([]Decision, 0, len(t.Remove)), RemovedBytes: t.RemovedBytes}
	for _, p := range t.Remove {
		r.Remove = append(r.Remove, Decision{Key: p.Key, Size: p.Size, Action: Remove, Reason: p.Reason})
	}
	return r
}

// ParsePlanFile decodes a plan file read from name and checks it: the
// kind and version, one JSON document, a checkpoint URL and location, a
// minimum of one batch, no negative duration, and every planned key a
// valid store key named once with a reason. An error wraps ErrPlanFile and
// names the file.
func ParsePlanFile(name string, data []byte) (*PlanFile, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrPlanFile, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxPlanFileBytes {
		return nil, bad("%d bytes, more than %d", len(data), MaxPlanFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var pf PlanFile
	if err := dec.Decode(&pf); err != nil {
		return nil, bad("%v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("more than one JSON document")
	}
	switch {
	case pf.Kind != PlanFileKind:
		return nil, bad("kind %q: want %q (write one with ckgate retention plan --out FILE)", pf.Kind, PlanFileKind)
	case pf.Version != 1:
		return nil, bad("version %d: want 1", pf.Version)
	case pf.Policy.MinBatches < 1:
		return nil, bad("policy min_batches %d: want 1 or more", pf.Policy.MinBatches)
	case pf.Policy.RetainForMs < 0 || pf.Policy.LogRetention <= 0:
		return nil, bad("policy: want retain_for_ms 0 or more and log_retention_ms above 0")
	}
	seen := map[string]bool{}
	for i, t := range append([]PlanTarget{pf.Checkpoint}, pf.Sinks...) {
		what := "checkpoint"
		if i > 0 {
			what = fmt.Sprintf("sink %d", i)
		}
		if strings.TrimSpace(t.URL) == "" || t.Location == "" {
			return nil, bad("%s: no url or location", what)
		}
		if seen[t.Location] {
			return nil, bad("%s: %s planned twice", what, t.Location)
		}
		seen[t.Location] = true
		keys := make(map[string]bool, len(t.Remove))
		var sum int64
		for j, p := range t.Remove {
			if err := gateway.ValidateKey("plan", p.Key); err != nil {
				return nil, bad("%s: remove %d: %v", what, j, err)
			}
			if keys[p.Key] {
				return nil, bad("%s: %s planned twice", what, p.Key)
			}
			keys[p.Key] = true
			if p.Size < 0 || p.Reason == "" {
				return nil, bad("%s: %s: want a size of 0 or more and a reason", what, p.Key)
			}
			sum += p.Size
		}
		if sum != t.RemovedBytes {
			return nil, bad("%s: removed_bytes %d, the planned keys hold %d", what, t.RemovedBytes, sum)
		}
	}
	return &pf, nil
}

// Change is one way the checkpoint differs from what a plan saw.
type Change struct {
	Key  string `json:"key,omitempty"`
	What string `json:"what"`
}

func (c Change) String() string {
	if c.Key == "" {
		return c.What
	}
	return c.Key + ": " + c.What
}

// StaleError is ErrPlanStale with every change found.
type StaleError struct {
	Target  string
	Changes []Change
}

func (e *StaleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (%d changes; make and review a new plan): ", e.Target, ErrPlanStale.Error(), len(e.Changes))
	for i, c := range e.Changes {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Changes)-3)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

func (e *StaleError) Unwrap() []error { return []error{ErrPlanStale, gateway.ErrPrecondition} }

// Check compares the target's plan with the root as it is now: the
// listing l, now the plan of l with the plan's policy at the current time,
// and queryID the checkpoint's query id now. It returns a *StaleError when
// the query id differs, the log went back (a lower latest offsets or
// commit batch), a planned key changed size or version, or a planned key
// that is still there is one the current plan keeps (so deleting it is no
// longer safe). A planned key already gone is no change: applying the plan
// again after a failure part-way finishes it.
func (t PlanTarget) Check(l Listing, now *RetentionResult, queryID string) error {
	var ch []Change
	if t.QueryID != queryID {
		ch = append(ch, Change{Key: "metadata", What: fmt.Sprintf("query id %q when planned, %q now: another query's checkpoint", t.QueryID, queryID)})
	}
	back := func(name string, was, is *int64) {
		if was != nil && (is == nil || *is < *was) {
			ch = append(ch, Change{What: fmt.Sprintf("the latest %s batch was %d when planned, %s now", name, *was, int64Str(is))})
		}
	}
	back("offsets", t.LatestOffsets, now.LatestOffsets)
	back("commit", t.LatestCommit, now.LatestCommit)
	attrs := make(map[string]gateway.Attrs, len(l.Objects))
	for _, o := range l.Objects {
		attrs[o.Key] = o
	}
	kept := make(map[string]string, len(now.Keep))
	for _, d := range now.Keep {
		kept[d.Key] = d.Reason
	}
	for _, p := range t.Remove {
		a, ok := attrs[p.Key]
		switch {
		case !ok:
		case a.Size != p.Size:
			ch = append(ch, Change{Key: p.Key, What: fmt.Sprintf("%d bytes when planned, %d now", p.Size, a.Size)})
		case p.Version != "" && a.Version != "" && a.Version != p.Version:
			ch = append(ch, Change{Key: p.Key, What: fmt.Sprintf("version %s when planned, %s now (rewritten)", p.Version, a.Version)})
		case p.Version == "" && !p.Modified.IsZero() && !a.Modified.IsZero() && !a.Modified.Equal(p.Modified):
			ch = append(ch, Change{Key: p.Key, What: fmt.Sprintf("modified %s when planned, %s now (rewritten)", p.Modified.Format(time.RFC3339Nano), a.Modified.UTC().Format(time.RFC3339Nano))})
		case kept[p.Key] != "":
			ch = append(ch, Change{Key: p.Key, What: "the checkpoint needs it now: " + kept[p.Key]})
		}
	}
	if len(ch) == 0 {
		return nil
	}
	return &StaleError{Target: t.URL, Changes: ch}
}

func int64Str(v *int64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}
