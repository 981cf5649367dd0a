package s3atrace

import (
	"context"
	"fmt"
	"slices"
)

// Resume is what the driver sends when the query (re)starts on the
// checkpoint as it stands now, to run up to batch until (exclusive), as
// Spark's restart does: the metadata and the source's initial offsets are
// written only when missing; the latest offsets/L without commits/L is
// re-run with those offsets (its state rewritten, the sink skipped when
// its manifest of L is there), and batches after the latest commit are
// planned anew. It reads the store (LISTs of the logs, HEADs) when called.
func (d *Driver) Resume(ctx context.Context, until int64) ([]Step, error) {
	var steps []Step
	meta, err := d.exists(ctx, d.key("metadata"))
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if !meta {
		steps = append(steps, d.createAtomic(-1, d.key("metadata"), d.metadataBody(), false)...)
	}
	if d.Source {
		src, err := d.exists(ctx, d.key("sources/0/0"))
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		if !src {
			steps = append(steps, d.createAtomic(-1, d.key("sources/0/0"), d.sourceBody(), false)...)
		}
	}
	latest := func(dir string) (int64, error) {
		ids, err := d.batchFiles(ctx, d.key(dir))
		if err != nil || len(ids) == 0 {
			return -1, err
		}
		return slices.Max(ids), nil
	}
	L, err := latest("offsets")
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	C, err := latest("commits")
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	next := L + 1
	if L >= 0 && C < L && L < until {
		sink := true
		if d.Sink != "" {
			S, err := d.batchFiles(ctx, d.Sink+"/_spark_metadata")
			if err != nil {
				return nil, fmt.Errorf("resume: %w", err)
			}
			sink = !slices.Contains(S, L) // FileStreamSink skips a batch its log has
		}
		steps = append(steps, d.run(L, sink)...)
	}
	for n := next; n < until; n++ {
		steps = append(steps, d.Batch(n)...)
	}
	return steps, nil
}
