package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
)

// Principal kinds the default policies know. Any other kind is unknown and
// gets the least rights.
const (
	KindJob          = "job"
	KindRetention    = "retention"
	KindHousekeeping = "housekeeping"
	KindAdmin        = "admin"
	// KindArchive copies whole checkpoints into new roots (archive,
	// fresh-start, rehearsal copies): it only creates, create-only, inside
	// its scope, and never deletes or overwrites.
	KindArchive = "archive"
)

// Kinds are the principal kinds the default policies know.
var Kinds = []string{KindAdmin, KindHousekeeping, KindRetention, KindJob, KindArchive}

// Principal is who asks: an id (a service account, a role, a user) and a
// kind. Reason is an admin's stated reason for breaking glass.
type Principal struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

// Facts are what is known about the checkpoint a decision concerns.
type Facts struct {
	QueryID         string `json:"query_id,omitempty"`
	MetadataQueryID string `json:"metadata_query_id,omitempty"` // the query id in the root's metadata, for open
	LatestBatch     *int64 `json:"latest_batch,omitempty"`
	RetainFrom      *int64 `json:"retain_from,omitempty"`
}

// Plan is a retention plan: the keys (relative to the checkpoint root) that
// retention may delete, each with the planner's reason.
type Plan struct {
	ID       string            `json:"id,omitempty"`
	Obsolete map[string]string `json:"obsolete"`
}

// KnownQuery is another query's checkpoint root, for the shared-path rules.
type KnownQuery struct {
	QueryID string `json:"query_id"`
	Root    string `json:"root"`
}

// Input is one gateway decision's input (data.ckgate.gateway.decision):
//
//	{"action": "put"|"delete"|"open", "key", "location", "path", "root",
//	 "roots", "scope", "cond", "exists", "size", "stream", "writer_session",
//	 "principal": {id, kind, reason},
//	 "checkpoint": {query_id, metadata_query_id, latest_batch, retain_from},
//	 "plan": {id, obsolete: {KEY: reason}}, "known_queries": [{query_id, root}],
//	 "sink": {owner: {query_id, checkpoint}, latest_batch, handover},
//	 "purge": {log, batch, latest_offsets, latest_commit, restart_floor, latest_compact},
//	 "root_owner", "process": {id, fenced_by, fenced_at_batch}}
//
// These fields are the contract that users' own rules read:
//   - location: the canonical location of the object the mutation touches
//     (gateway.CanonicalKey: "file:///real/path", "s3://bucket/name",
//     "gs://bucket/name", "az://account/container/name"); path is the same
//     value, kept for rules written before location existed;
//   - roots: every checkpoint root above location, outermost first, and
//     root the innermost of them ("" when there is none). A root is a
//     directory holding a metadata entry of any kind, or offsets/ or
//     commits/ holding a log-entry name (see RootFinder). For an open,
//     root is the checkpoint root being opened;
//   - scope: where the principal was let write (its own checkpoint root, or
//     its sink's directory; for retention the checkpoint its plan is for);
//   - key: the store key as the caller named it, for messages only;
//   - writer_session: true when the write comes through the writer session
//     of the query that owns scope.
//
// Every location in an input, known queries' roots included, is canonical:
// rules compare them as strings.
type Input struct {
	Action        string        `json:"action"`
	Key           string        `json:"key,omitempty"`
	Location      string        `json:"location,omitempty"`
	Path          string        `json:"path,omitempty"`
	Root          string        `json:"root"`
	Roots         []string      `json:"roots,omitempty"`
	Scope         string        `json:"scope,omitempty"`
	Cond          string        `json:"cond,omitempty"` // none, if-absent, if-match
	Exists        *bool         `json:"exists,omitempty"`
	Size          int64         `json:"size,omitempty"`
	Stream        bool          `json:"stream,omitempty"`
	WriterSession bool          `json:"writer_session,omitempty"`
	Principal     Principal     `json:"principal"`
	Checkpoint    Facts         `json:"checkpoint"`
	Plan          *Plan         `json:"plan,omitempty"`
	KnownQueries  []KnownQuery  `json:"known_queries,omitempty"`
	Sink          *SinkFacts    `json:"sink,omitempty"`
	Purge         *PurgeFacts   `json:"purge,omitempty"`
	RootOwner     string        `json:"root_owner,omitempty"`
	Process       *ProcessFacts `json:"process,omitempty"`
}

// SinkFacts are what is known about a file sink a query takes over
// (action "adopt_sink"): its current owner ({} when it has no owner
// record: written by Spark or a query whose plan does not name it), its
// latest manifest id, and how the hand-over was asked for ("adopt-sink"
// for run --adopt-sink, "fresh-start" for the new root of the owner's
// fresh start).
type SinkFacts struct {
	Owner       SinkOwnerFacts `json:"owner"`
	LatestBatch int64          `json:"latest_batch"`
	Handover    string         `json:"handover"`
}

// SinkOwnerFacts name a file sink's owner.
type SinkOwnerFacts struct {
	QueryID    string `json:"query_id,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
}

// condName is the input's spelling of a condition.
func condName(c gateway.Cond) string {
	switch c.Kind {
	case gateway.CondNone:
		return "none"
	case gateway.CondIfAbsent:
		return "if-absent"
	case gateway.CondIfMatch:
		return "if-match"
	}
	return "unknown"
}

// JoinPath joins a location and a key with one '/'.
func JoinPath(base, key string) string {
	base = strings.TrimSuffix(base, "/")
	if base == "" {
		return key
	}
	if key == "" {
		return base
	}
	return base + "/" + key
}

// The input is built as an ast.Value directly: converting a Go value
// through JSON on every mutation would cost more than the evaluation.

func str(s string) *ast.Term { return ast.StringTerm(s) }

// keyTerms are the input's and the decision's field names, built once.
var keyTerms = map[string]*ast.Term{}

func init() {
	for _, k := range []string{"action", "key", "path", "location", "root", "roots", "scope", "writer_session", "cond", "exists", "size", "stream", "principal",
		"checkpoint", "plan", "known_queries", "id", "kind", "reason", "query_id", "metadata_query_id",
		"latest_batch", "retain_from", "obsolete",
		"root_owner", "process", "fenced_by", "fenced_at_batch", "purge", "log", "batch", "latest_offsets", "latest_commit", "restart_floor", "latest_compact",
		// the decision's and its violations' keys
		"allow", "deny", "warn", "overridden", "break_glass", "name", "severity", "msg"} {
		keyTerms[k] = ast.StringTerm(k)
	}
}

func item(k string, v *ast.Term) [2]*ast.Term { return ast.Item(keyTerm(k), v) }

// Values every mutation input holds, built once.
var (
	actionTerms = map[gateway.Op]*ast.Term{gateway.OpPut: ast.StringTerm("put"), gateway.OpDelete: ast.StringTerm("delete")}
	condTerms   = map[gateway.CondKind]*ast.Term{
		gateway.CondNone: ast.StringTerm("none"), gateway.CondIfAbsent: ast.StringTerm("if-absent"), gateway.CondIfMatch: ast.StringTerm("if-match"),
	}
	trueTerm, falseTerm = ast.BooleanTerm(true), ast.BooleanTerm(false)
)

func boolTerm(b bool) *ast.Term {
	if b {
		return trueTerm
	}
	return falseTerm
}

func (p Principal) term() *ast.Term {
	items := [][2]*ast.Term{item("id", str(p.ID)), item("kind", str(p.Kind))}
	if p.Reason != "" {
		items = append(items, item("reason", str(p.Reason)))
	}
	return ast.ObjectTerm(items...)
}

func (f Facts) term() *ast.Term {
	items := [][2]*ast.Term{item("query_id", str(f.QueryID))}
	if f.MetadataQueryID != "" {
		items = append(items, item("metadata_query_id", str(f.MetadataQueryID)))
	}
	if f.LatestBatch != nil {
		items = append(items, item("latest_batch", ast.IntNumberTerm(int(*f.LatestBatch))))
	}
	if f.RetainFrom != nil {
		items = append(items, item("retain_from", ast.IntNumberTerm(int(*f.RetainFrom))))
	}
	return ast.ObjectTerm(items...)
}

func (p *Plan) term() *ast.Term {
	obs := make([][2]*ast.Term, 0, len(p.Obsolete))
	for k, why := range p.Obsolete {
		obs = append(obs, item(k, str(why)))
	}
	return ast.ObjectTerm(item("id", str(p.ID)), item("obsolete", ast.ObjectTerm(obs...)))
}

func knownTerm(qs []KnownQuery) *ast.Term {
	arr := make([]*ast.Term, len(qs))
	for i, q := range qs {
		arr[i] = ast.ObjectTerm(item("query_id", str(q.QueryID)), item("root", str(q.Root)))
	}
	return ast.ArrayTerm(arr...)
}

// value returns the input as an ast.Value.
func (in *Input) value() ast.Value {
	items := []([2]*ast.Term){
		item("action", str(in.Action)),
		item("root", str(in.Root)),
		item("principal", in.Principal.term()),
		item("checkpoint", in.Checkpoint.term()),
	}
	if in.Key != "" || in.Action != "open" {
		items = append(items, item("key", str(in.Key)), item("path", str(in.Path)), item("location", str(in.Location)))
		roots := make([]*ast.Term, len(in.Roots))
		for i, r := range in.Roots {
			roots[i] = str(r)
		}
		items = append(items, item("roots", ast.ArrayTerm(roots...)), item("scope", str(in.Scope)))
	}
	if in.WriterSession {
		items = append(items, item("writer_session", trueTerm))
	}
	if in.Cond != "" {
		items = append(items, item("cond", str(in.Cond)))
	}
	if in.Exists != nil {
		items = append(items, item("exists", ast.BooleanTerm(*in.Exists)))
	}
	if in.Action == "put" {
		items = append(items, item("size", ast.IntNumberTerm(int(in.Size))), item("stream", ast.BooleanTerm(in.Stream)))
	}
	if in.Plan != nil {
		items = append(items, item("plan", in.Plan.term()))
	}
	if len(in.KnownQueries) > 0 {
		items = append(items, item("known_queries", knownTerm(in.KnownQueries)))
	}
	if f := in.Sink; f != nil {
		owner := ast.ObjectTerm(item("query_id", str(f.Owner.QueryID)), item("checkpoint", str(f.Owner.Checkpoint)))
		items = append(items, item("sink", ast.ObjectTerm(item("owner", owner),
			item("latest_batch", ast.IntNumberTerm(int(f.LatestBatch))), item("handover", str(f.Handover)))))
	}
	return ast.NewObject(items...)
}

// ParseInput reads a decision input as JSON (the shape of Input), for
// `ckgate policy eval`: unknown fields, a missing action or root, and an
// action other than put, delete or open are errors. An empty path is the
// root joined with the key.
func ParseInput(data []byte) (Input, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Input{}, fmt.Errorf("policy input: %w", err)
	}
	if dec.More() {
		return Input{}, errors.New("policy input: trailing data after the JSON object")
	}
	switch in.Action {
	case "put", "delete":
		if in.Key == "" && in.Path == "" {
			return Input{}, fmt.Errorf("policy input: a %s needs a key or a path", in.Action)
		}
		if in.Cond == "" {
			in.Cond = "none"
		}
		switch in.Cond {
		case "none", "if-absent", "if-match":
		default:
			return Input{}, fmt.Errorf("policy input: cond %q: want none, if-absent or if-match", in.Cond)
		}
	case "open", "adopt_sink":
	default:
		return Input{}, fmt.Errorf("policy input: action %q: want put, delete, open or adopt_sink", in.Action)
	}
	if in.Root == "" {
		return Input{}, errors.New("policy input: no root")
	}
	in.Root = strings.TrimSuffix(in.Root, "/")
	if in.Path == "" && in.Key != "" {
		in.Path = JoinPath(in.Root, in.Key)
	}
	// Hand-written inputs predate or skip the location fields: the path
	// is the location, the root the one root and the scope.
	if in.Location == "" {
		in.Location = in.Path
	}
	if in.Path == "" {
		in.Path = in.Location
	}
	if in.Scope == "" {
		in.Scope = in.Root
	}
	if in.Roots == nil && in.Root != "" && in.Action != "open" {
		in.Roots = []string{in.Root}
	}
	return in, nil
}
