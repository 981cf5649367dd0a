package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/engine/sink"
	"github.com/ckgate/ckgate/engine/spec"
	"github.com/ckgate/ckgate/gateway"
)

func planOf(s *spec.Spec) checkpoint.PlanStateful {
	o := s.Operator
	p := checkpoint.PlanStateful{SourceKind: s.Source.Kind, Operator: o.Kind, Keys: o.Keys, SizeMs: o.Size.Ms(),
		SlideMs: o.Slide.Ms(), GapMs: o.Gap.Ms(), OutputMode: s.OutputMode}
	for _, a := range o.Aggregates {
		p.Aggregates = append(p.Aggregates, checkpoint.PlanAggregate{Func: a.Func, Field: a.Field})
	}
	if s.Stateful() {
		p.EventTime = s.EventTime
	}
	return p
}

func fingerprint(p checkpoint.PlanStateful) string {
	var b strings.Builder
	fmt.Fprintf(&b, "source=%s;event_time=%s;operator=%s;keys=%s;size=%d;slide=%d;gap=%d;mode=%s;aggs=",
		p.SourceKind, p.EventTime, p.Operator, strings.Join(p.Keys, ","), p.SizeMs, p.SlideMs, p.GapMs, p.OutputMode)
	for _, a := range p.Aggregates {
		b.WriteString(a.Func + ":" + a.Field + ",")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// planNote says what checkPlan changed in a recorded plan.
type planNote struct {
	// Replaced: what differed when want replaced the plan of a checkpoint
	// that holds no batch yet.
	Replaced string
	// Updated: the settings that differed from the recorded ones (or that
	// an older plan did not record), written again.
	Updated string
}

// checkPlan writes the plan on the first run, or compares it with the
// recorded one. It returns the partitions to use. Settings that differ
// from the recorded ones (PlanSettings: a watermark, a where filter, a
// rate limit; compat classifies them allowed or undefined) do not refuse
// the restart: they are written again, compare-and-swap, and said in the
// note; a plan without settings (written by an older ckgate) gets them. A recorded plan in an
// older form (a sink URL redacted by the old list of names, so that it may
// still hold a secret, and no URL hash) is written again in the current
// form, compare-and-swap.
//
// A checkpoint that holds no batch yet (a first run that found nothing to
// read, or stopped before its first batch: no offsets, commits, source log
// or state) has no output or state built on its plan: a different spec
// replaces the recorded plan there, compare-and-swap, instead of being
// refused; replaced then says what changed.
func checkPlan(ctx context.Context, cp gateway.Store, want checkpoint.EnginePlan) (checkpoint.EnginePlan, planNote, error) {
	data, v, err := gateway.GetBounded(ctx, cp, checkpoint.PlanKey, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		if _, err := cp.Put(ctx, checkpoint.PlanKey, want.Encode(), gateway.IfAbsent()); err != nil && !errors.Is(err, gateway.ErrExists) {
			return checkpoint.EnginePlan{}, planNote{}, fmt.Errorf("write %s: %w", checkpoint.PlanKey, err)
		} else if err == nil {
			return want, planNote{}, nil
		}
		data, v, err = gateway.GetBounded(ctx, cp, checkpoint.PlanKey, 0)
	}
	if err != nil {
		return checkpoint.EnginePlan{}, planNote{}, fmt.Errorf("read %s: %w", checkpoint.PlanKey, err)
	}
	got, err := checkpoint.DecodePlan(data)
	if err != nil {
		return checkpoint.EnginePlan{}, planNote{}, fmt.Errorf("%s: %w", checkpoint.PlanKey, err)
	}
	p, updated, err := comparePlan(ctx, cp, *got, v, want)
	if errors.Is(err, ErrIncompatible) {
		empty, eerr := HoldsNoBatch(ctx, cp)
		if eerr != nil {
			return checkpoint.EnginePlan{}, planNote{}, errors.Join(err, eerr)
		}
		if empty {
			if _, perr := cp.Put(ctx, checkpoint.PlanKey, want.Encode(), gateway.IfMatch(v)); perr != nil {
				return checkpoint.EnginePlan{}, planNote{}, fmt.Errorf("%w; the checkpoint holds no batch yet, but replacing its plan failed: %w", err, perr)
			}
			return want, planNote{Replaced: strings.TrimPrefix(err.Error(), checkpoint.PlanKey+": "+ErrIncompatible.Error()+": ")}, nil
		}
	}
	return p, planNote{Updated: updated}, err
}

// HoldsNoBatch reports whether the checkpoint in cp holds nothing a batch
// writes: no offsets, commits, source log entries or state files (an
// operator's metadata is written before the first batch).
func HoldsNoBatch(ctx context.Context, cp gateway.Store) (bool, error) {
	for _, dir := range []string{checkpoint.OffsetsDir + "/", checkpoint.CommitsDir + "/", checkpoint.SourcesDir + "/", checkpoint.StateDir + "/"} {
		for a, err := range cp.List(ctx, dir) {
			if err != nil {
				return false, fmt.Errorf("list %s: %w", dir, err)
			}
			if segs := strings.Split(a.Key, "/"); dir == checkpoint.StateDir+"/" && len(segs) >= 3 && segs[2] == "_metadata" || gateway.IsDirMarker(a.Key) {
				continue // operator metadata, or a directory marker (Hadoop's mkdirs)
			}
			return false, nil
		}
	}
	return true, nil
}

// comparePlan compares the recorded plan got (at version v) with want,
// and writes it again when its settings or a stale sink identity differ;
// updated says which settings.
func comparePlan(ctx context.Context, cp gateway.Store, got checkpoint.EnginePlan, v gateway.Version, want checkpoint.EnginePlan) (_ checkpoint.EnginePlan, updated string, _ error) {
	if !maps.Equal(got.Source, want.Source) {
		return checkpoint.EnginePlan{}, "", fmt.Errorf("%s: %w: the source differs: the checkpoint was written for %s, the spec reads %s",
			checkpoint.PlanKey, ErrIncompatible, describe(got.Source), describe(want.Source))
	}
	if !sink.SameIdentity(got.Sink, want.Sink) {
		hidden := ""
		if sink.HiddenChange(got.Sink, want.Sink) {
			hidden = " (the same URL but for a hidden part: user info, a query value or the fragment, which the plan records as a SHA-256; a rotated key counts too)"
		}
		return checkpoint.EnginePlan{}, "", fmt.Errorf("%s: %w: the sink differs: the checkpoint was written for %s, the spec writes %s%s",
			checkpoint.PlanKey, ErrIncompatible, describe(got.Sink), describe(want.Sink), hidden)
	}
	if got.Fingerprint != want.Fingerprint {
		return checkpoint.EnginePlan{}, "", fmt.Errorf("%s: %w: the stateful plan changed (%s); Spark's rule: no change to stateful operators between restarts",
			checkpoint.PlanKey, ErrIncompatible, planDiff(got.Stateful, want.Stateful))
	}
	if got.Partitions <= 0 {
		return checkpoint.EnginePlan{}, "", fmt.Errorf("%s: %w: partitions %d", checkpoint.PlanKey, ErrCorrupt, got.Partitions)
	}
	if g, w := got.Settings, want.Settings; g != nil && w != nil && g.StateFormat != "" && w.StateFormat != "" && g.StateFormat != w.StateFormat {
		return checkpoint.EnginePlan{}, "", fmt.Errorf("%s: %w: the state format differs: the checkpoint's state is %s, this engine reads and writes %s",
			checkpoint.PlanKey, ErrIncompatible, g.StateFormat, w.StateFormat)
	}
	stale := sink.Stale(got.Sink, want.Sink)
	if stale {
		got.Sink = want.Sink
	}
	if want.Settings != nil {
		var err error
		if want.Settings, err = keepSinkFormat(ctx, cp, got.Settings, want.Settings); err != nil {
			return checkpoint.EnginePlan{}, "", err
		}
		updated = settingsDiff(got.Settings, *want.Settings)
		got.Settings = want.Settings
	}
	if stale || updated != "" {
		if _, err := cp.Put(ctx, checkpoint.PlanKey, got.Encode(), gateway.IfMatch(v)); err != nil {
			return checkpoint.EnginePlan{}, "", fmt.Errorf("write %s again with the spec's settings and without secrets: %w", checkpoint.PlanKey, err)
		}
	}
	return got, updated, nil
}

// describe names an identity for messages and progress events: redacted
// (a plan written before the allowlist redactor may hold a secret), and
// without the URL hash.
func describe(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != sink.URLHashKey {
			parts = append(parts, k+"="+gateway.Redact(m[k]))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func planDiff(a, b checkpoint.PlanStateful) string {
	if d := jsonDiff(a, b); d != "" {
		return d
	}
	return "fingerprint differs"
}

// jsonDiff lists the top-level JSON fields of a and b that differ.
func jsonDiff(a, b any) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var ma, mb map[string]any
	_ = json.Unmarshal(ja, &ma)
	_ = json.Unmarshal(jb, &mb)
	var diffs []string
	all := map[string]any{}
	maps.Copy(all, ma)
	maps.Copy(all, mb)
	for _, k := range slices.Sorted(maps.Keys(all)) {
		x, _ := json.Marshal(ma[k])
		y, _ := json.Marshal(mb[k])
		if !bytes.Equal(x, y) {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, x, y))
		}
	}
	return strings.Join(diffs, "; ")
}
