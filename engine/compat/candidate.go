package compat

import (
	"github.com/ckgate/ckgate/engine/spec"
)

// Verdict is the class of the result as a whole: NotAllowed when a change
// is not allowed, Undefined when one is undefined, else Allowed (the
// candidate restarts from the checkpoint as it is).
func (r *Result) Verdict() Class {
	switch {
	case r.Count(NotAllowed) > 0:
		return NotAllowed
	case r.Count(Undefined) > 0:
		return Undefined
	}
	return Allowed
}

// CompareSpecs classifies a candidate spec against the current one, as if
// the current spec had written a checkpoint with ckgate's engine (its
// _ckgate/plan.json): what `ckgate compat --spec CANDIDATE` says on that
// checkpoint, but without the checkpoint's latest watermark, so a
// watermark change's LateRange has lags and no absolute times (set
// Recorded.WatermarkMs and call Compare for those). Relative paths resolve
// against opts.BaseDir for both.
func CompareSpecs(current, candidate *spec.Spec, opts SpecOptions) (*Result, error) {
	cur, err := FromSpec(current, opts)
	if err != nil {
		return nil, err
	}
	cand, err := FromSpec(candidate, opts)
	if err != nil {
		return nil, err
	}
	return Compare(&Recorded{Plan: cur, Writer: WriterCkgate}, cand), nil
}
