package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ckgate/ckgate/gateway"
)

// RootOwnerKey is where a root records its owner (gateway.RootOwnerKey).
const RootOwnerKey = gateway.RootOwnerKey

// maxRootOwnerBytes bounds the read of an owner record.
const maxRootOwnerBytes = 4 << 10

// RootOwner is the owner record's content.
type RootOwner struct {
	Principal string    `json:"principal"`
	Kind      string    `json:"kind"`
	Since     time.Time `json:"since"`
}

// WithRootOwners makes every job principal's write under a checkpoint root
// carry the root's owner (input.root_owner), claiming the root for the
// principal when it has no owner record yet; the default rule CKG-P014
// refuses every other job principal's writes under it (one query per
// checkpoint, whoever holds credentials for the bucket). The records are
// read and written through the store given to WithExists.
func WithRootOwners() AuthorizerOption { return func(a *Authorizer) { a.owners = true } }

// rootOwner returns the principal owning root (a canonical location),
// claiming it for a.p when it has no record. The record is read on every
// call, never cached: a root deleted outside the guard (an operator
// resetting the query, another replica) and started again by another
// query belongs to that query, and a cached owner would let the old
// query's writes into it. A read comes first, so the steady state costs
// one read and no write; the claim is create-only, so of racing claimants
// one wins and the others read the winner.
func (a *Authorizer) rootOwner(ctx context.Context, root string) (string, error) {
	dir, ok := a.keyOf(root)
	if !ok || a.raw == nil {
		return "", fmt.Errorf("root %s is outside the guarded store: its owner record cannot be read", root)
	}
	key := joinKey(dir, RootOwnerKey)
	owner, err := a.readRootOwner(ctx, key)
	if !errors.Is(err, gateway.ErrNotFound) {
		return owner, err
	}
	rec, err := json.Marshal(RootOwner{Principal: a.p.ID, Kind: a.p.Kind, Since: a.now().UTC()})
	if err != nil {
		return "", err
	}
	switch _, err = a.raw.Put(ctx, key, rec, gateway.IfAbsent()); {
	case err == nil:
		return a.p.ID, nil
	case errors.Is(err, gateway.ErrExists):
		return a.readRootOwner(ctx, key)
	}
	return "", fmt.Errorf("recording the owner of %s in %s: %w", root, key, err)
}

// readRootOwner reads and checks an owner record.
func (a *Authorizer) readRootOwner(ctx context.Context, key string) (string, error) {
	data, _, err := gateway.GetBounded(ctx, a.raw, key, maxRootOwnerBytes)
	if err != nil {
		return "", fmt.Errorf("reading the root owner record %s: %w", key, err)
	}
	var r RootOwner
	if err := json.Unmarshal(data, &r); err != nil || strings.TrimSpace(r.Principal) == "" {
		return "", fmt.Errorf("root owner record %s is corrupt (want {\"principal\": ID, ...}): %v", key, err)
	}
	return r.Principal, nil
}

// ownedRoot is the root whose owner a job principal's write of loc must
// match: the innermost root above it, or, for the metadata that starts a
// new root, that root itself. "" when there is none.
func ownedRoot(c gateway.Call, loc string, roots []string) string {
	if len(roots) > 0 {
		return roots[len(roots)-1]
	}
	if c.Op != gateway.OpPut {
		return ""
	}
	dir, name := splitLocation(loc)
	if name != "metadata" || dir == "" {
		return ""
	}
	_, parent := splitLocation(dir)
	if parent == "_metadata" || strings.Contains(dir, "/state/") {
		return "" // an operator's metadata starts no root
	}
	return dir
}

// ProcessFacts are the client process a write comes from (input.process),
// when it names one (gateway.WithWriterProcess: S3A's audit referrer) and
// the guard is made WithRootOwners: its id and, when a newer process has
// committed over it (the root's gateway.Committer record), which one and
// at which batch (fenced_by, fenced_at_batch).
type ProcessFacts struct {
	ID            string `json:"id"`
	FencedBy      string `json:"fenced_by,omitempty"`
	FencedAtBatch *int64 `json:"fenced_at_batch,omitempty"`
}

// processFacts reads the committer record of root for a write from the
// process ctx names; nil when it names none.
func (a *Authorizer) processFacts(ctx context.Context, root string) (*ProcessFacts, error) {
	id := gateway.WriterProcess(ctx)
	if id == "" {
		return nil, nil
	}
	f := &ProcessFacts{ID: id}
	dir, ok := a.keyOf(root)
	if !ok || a.raw == nil {
		return nil, fmt.Errorf("root %s is outside the guarded store: its committer record cannot be read", root)
	}
	c, _, err := gateway.ReadCommitter(ctx, a.raw, dir)
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		return f, nil
	case err != nil:
		return nil, err
	}
	if c.IsFenced(id) {
		f.FencedBy, f.FencedAtBatch = c.Process, &c.Batch
	}
	return f, nil
}

func (f *ProcessFacts) term() *ast.Term {
	items := [][2]*ast.Term{item("id", str(f.ID))}
	if f.FencedBy != "" {
		items = append(items, item("fenced_by", str(f.FencedBy)))
	}
	if f.FencedAtBatch != nil {
		items = append(items, item("fenced_at_batch", ast.IntNumberTerm(int(*f.FencedAtBatch))))
	}
	return ast.ObjectTerm(items...)
}

// rootFacts are the owner of the root a job principal's write falls under
// and the process it comes from (WithRootOwners only).
func (a *Authorizer) rootFacts(ctx context.Context, c gateway.Call, loc string, roots []string) (string, *ProcessFacts, error) {
	r := ownedRoot(c, loc, roots)
	if !a.owners || a.p.Kind != KindJob || r == "" {
		return "", nil, nil
	}
	owner, err := a.rootOwner(ctx, r)
	if err != nil {
		return "", nil, err
	}
	process, err := a.processFacts(ctx, r)
	return owner, process, err
}
