package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// Claim is a query's take-over of a file sink it does not own: one that
// another query owns (Owner), or one whose manifest log was written
// without an owner record by something other than this query (Owner nil:
// Spark, or an earlier ckgate whose plan does not name it).
type Claim struct {
	Sink     string                // the sink's URL, redacted, for messages
	Location string                // the sink's URL as opened (it may hold secrets)
	QueryID  string                // the query that claims it
	Owner    *checkpoint.SinkOwner // nil: no owner record
	Latest   int64                 // the sink's latest manifest id (-1: none)
}

// Adopter decides a Claim: it returns the reason to record in the new
// owner record, "" to decline (the sink then refuses with ErrInUse,
// naming the owner and the way out), or an error refusing it (a policy
// denial).
type Adopter func(ctx context.Context, c Claim) (reason string, err error)

// ownership is what the file sink decided when it opened.
type ownership struct {
	offset int64 // manifest id of this query's batch 0
	entry  int64 // the owner log's latest entry number (-1: none)
	// pending is the owner record to create at the first commit (a run
	// that writes no batch leaves the sink as it was); follow says its
	// offset is set then, to put that batch after the sink's latest
	// manifest (a take-over)
	pending *checkpoint.SinkOwner
	follow  bool
	// claimed: this process took the sink over and has not yet created a
	// manifest: any manifest in its way is the old owner's
	claimed bool
}

// claimOwnership reads the sink's owner log and manifest log and decides
// who writes: this query's own sink goes on; an empty sink, and one whose
// only writer was this query before owner records existed (its plan names
// the sink), gets this query's owner record at the first commit, batch ids
// as manifest ids; anything else is a Claim for env.Adopt, refused with
// ErrInUse when declined, whose owner record at the first commit puts that
// batch after the sink's latest manifest.
func (f *files) claimOwnership(ctx context.Context) error {
	owner, entry, err := checkpoint.ReadSinkOwner(ctx, f.out)
	if err != nil {
		return fmt.Errorf("file sink %s: %w", gateway.Redact(f.url), err)
	}
	f.own = ownership{entry: entry}
	if owner != nil && owner.QueryID == f.env.QueryID {
		f.own.offset = owner.BatchOffset
		return nil
	}
	if err := f.load(ctx); err != nil {
		return err
	}
	me := checkpoint.SinkOwner{Version: 1, QueryID: f.env.QueryID, Checkpoint: f.env.CheckpointURL}
	if owner == nil && f.latest < 0 {
		me.Reason = "first writer of an empty sink"
		f.own.pending = &me
		return nil
	}
	if owner == nil {
		planned, err := f.plannedHere(ctx)
		if err != nil {
			return err
		}
		if planned {
			// not when the sink is ahead of this checkpoint: another query
			// wrote those manifests (before owner records, this one's
			// batches were then "skipped"); a take-over puts its batches
			// after them
			planned, err = f.notAheadOf(ctx)
			if err != nil {
				return err
			}
		}
		if planned {
			me.Reason = "written by this query before sinks had owner records (its plan names the sink)"
			f.own.pending = &me
			return nil
		}
	}
	c := Claim{Sink: gateway.Redact(f.url), Location: f.url, QueryID: f.env.QueryID, Owner: owner, Latest: f.latest}
	reason := ""
	if f.env.Adopt != nil {
		if reason, err = f.env.Adopt(ctx, c); err != nil {
			return err
		}
	}
	if reason == "" {
		return refusal(c)
	}
	me.Reason = reason
	if owner != nil {
		me.From = &checkpoint.SinkOwnerRef{QueryID: owner.QueryID, Checkpoint: owner.Checkpoint}
	}
	f.own.pending, f.own.follow = &me, true
	return nil
}

// refusal is the error of a declined Claim: ErrInUse naming the owner
// and the ways out.
func refusal(c Claim) error {
	way := fmt.Sprintf("write this query to a new sink path, or hand the sink over deliberately with --adopt-sink "+
		"(this query's batches then go after the sink's manifest %d, none collides with an earlier one)", c.Latest)
	if c.Owner == nil {
		return inUsef("file sink %s is in use: its manifest log (%s, up to batch %d) was written by another writer (Spark, or another query: this checkpoint's plan does not name the sink, or the sink holds manifests beyond this checkpoint's batches) and it has no ckgate owner record (%s/); %s",
			c.Sink, checkpoint.SinkMetadataDir, c.Latest, checkpoint.SinkOwnerDir, way)
	}
	return inUsef("file sink %s is in use: it is owned by %s, recorded in %s/; a second query writing it would collide with the owner's batches; "+
		"run the owner's checkpoint instead, %s, or fresh-start the owner's checkpoint (ckgate fresh-start) and run the new root",
		c.Sink, c.Owner, checkpoint.SinkOwnerDir, way)
}

// writeOwner creates entry f.own.entry+1 of the owner log for o. Losing
// the create to another query is ErrInUse naming the winner.
func (f *files) writeOwner(ctx context.Context, o checkpoint.SinkOwner) error {
	key := checkpoint.SinkOwnerKey(f.own.entry + 1)
	o.Time = f.env.Now().UTC()
	if _, err := f.out.Put(ctx, key, checkpoint.EncodeSinkOwner(o), gateway.IfAbsent()); err != nil {
		if errors.Is(err, gateway.ErrExists) {
			if won, _, rerr := checkpoint.ReadSinkOwner(ctx, f.out); rerr == nil && won != nil && won.QueryID != o.QueryID {
				return inUsef("file sink %s is in use: %s took it over at the same time (%s)", gateway.Redact(f.url), won, key)
			}
		}
		return fmt.Errorf("file sink %s: write owner record: %w", gateway.Redact(f.url), err)
	}
	f.own.entry++
	f.own.offset = o.BatchOffset
	f.own.pending = nil
	return nil
}

// plannedHere reports whether this query's checkpoint plan names this sink
// (a checkpoint written by an earlier ckgate, before owner records).
func (f *files) plannedHere(ctx context.Context) (bool, error) {
	if f.env.Checkpoint == nil {
		return false, nil
	}
	p, err := checkpoint.ReadPlan(ctx, f.env.Checkpoint)
	if errors.Is(err, gateway.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return p.Sink != nil && SameIdentity(p.Sink, f.Identity()), nil
}

// notAheadOf reports whether the sink's latest manifest is at or below
// the latest batch in this query's offset log: every manifest can be one
// of its batches.
func (f *files) notAheadOf(ctx context.Context) (bool, error) {
	latest := int64(-1)
	for a, err := range f.env.Checkpoint.List(ctx, checkpoint.OffsetsDir+"/") {
		if errors.Is(err, gateway.ErrNotFound) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("list %s/: %w", checkpoint.OffsetsDir, err)
		}
		if n, perr := checkpoint.ParseBatchID(strings.TrimPrefix(a.Key, checkpoint.OffsetsDir+"/")); perr == nil {
			latest = max(latest, n)
		}
	}
	return f.latest <= latest, nil
}

// manifestID is the manifest id of batch, claiming the sink first when
// this is the first commit of a take-over: the new owner's batch goes
// after the sink's latest manifest, never onto one the old owner wrote.
func (f *files) manifestID(ctx context.Context, batch int64) (int64, error) {
	if o := f.own.pending; o != nil {
		if f.own.follow {
			// the old owner may have gone on since the sink opened
			f.loaded = false
			if err := f.load(ctx); err != nil {
				return 0, err
			}
			o.BatchOffset = f.latest + 1 - batch
		}
		if err := f.writeOwner(ctx, *o); err != nil {
			return 0, err
		}
		f.own.claimed = f.own.follow
	}
	return batch + f.own.offset, nil
}

// lostManifest explains a manifest this query could not create: an earlier
// attempt of its own wrote it (nil: skip the batch), or the sink has
// changed hands since it opened (ErrInUse).
func (f *files) lostManifest(ctx context.Context, key string) error {
	owner, _, err := checkpoint.ReadSinkOwner(ctx, f.out)
	if err != nil {
		return fmt.Errorf("file sink %s: %s exists: %w", gateway.Redact(f.url), key, err)
	}
	if owner != nil && owner.QueryID != f.env.QueryID {
		return inUsef("file sink %s is in use: %s exists and the sink is now owned by %s: stopping before this batch collides with its batches",
			gateway.Redact(f.url), key, owner)
	}
	if f.own.claimed {
		return inUsef("file sink %s is in use: %s appeared while this query took the sink over: its previous owner still writes it; stop that query, then run this one again (it goes on after the sink's latest manifest)",
			gateway.Redact(f.url), key)
	}
	return nil
}

// inUseError is a refusal of a sink another writer holds: errors.Is
// matches gateway.ErrInUse (exit 3), the message is its own.
type inUseError struct{ msg string }

func (e *inUseError) Error() string        { return e.msg }
func (e *inUseError) Is(target error) bool { return target == gateway.ErrInUse }

func inUsef(format string, args ...any) error {
	return &inUseError{msg: fmt.Sprintf(format, args...)}
}
