package source

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ckgate/ckgate/engine/row"
	"github.com/ckgate/ckgate/engine/spec"
)

// Sampler is a source that can show the first rows of its next batch
// without recording anything: the engine checks a spec's fields against
// them before the first batch is logged.
type Sampler interface {
	// Sample emits at most max rows of the batch that would follow start,
	// each with the input (a file's URL) it came from.
	Sample(ctx context.Context, start string, max int, emit func(input string, r *row.Row) error) error
}

// Inputs is a source that names the inputs (files) a batch read.
type Inputs interface {
	// Inputs returns the inputs of the rows after start up to end.
	Inputs(ctx context.Context, start, end string) ([]string, error)
}

var errSampled = errors.New("sampled enough")

func (f *files) Sample(ctx context.Context, start string, max int, emit func(string, *row.Row) error) error {
	from, err := parseLogOffset(start)
	if err != nil {
		return err
	}
	var keys []string
	if e, ok := f.batches[from+1]; ok && f.latest > from {
		for _, x := range e {
			keys = append(keys, x.Path)
		}
	} else {
		picked, err := f.pick(ctx, from+1)
		if err != nil {
			return err
		}
		for _, x := range picked {
			keys = append(keys, x.Path)
		}
	}
	n := 0
	for _, p := range keys {
		key, ok := strings.CutPrefix(p, f.url+"/")
		if !ok {
			return fmt.Errorf("%s: recorded input %s is not under the source path %s", f.env.Dir, p, f.url)
		}
		err := f.readFile(ctx, key, func(r *row.Row) error {
			if n++; n > max {
				return errSampled
			}
			return emit(p, r)
		})
		if errors.Is(err, errSampled) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *files) Inputs(ctx context.Context, start, end string) ([]string, error) {
	from, err := parseLogOffset(start)
	if err != nil {
		return nil, err
	}
	to, err := parseLogOffset(end)
	if err != nil {
		return nil, err
	}
	var out []string
	for n := from + 1; n <= to; n++ {
		entries, err := f.entries(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			out = append(out, e.Path)
		}
	}
	return out, nil
}

// RateFields are the fields of every row the rate source of s generates.
func RateFields(s *spec.Spec) []string {
	if s.Source.Keys > 0 {
		return rateKeyNames
	}
	return rateNames
}
