package validate_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ckgate/ckgate/internal/benchsum"
	"github.com/ckgate/ckgate/internal/emulator"
	"github.com/ckgate/ckgate/validate"
)

// BenchmarkValidate: a whole validate-access run against each backend
// (the local disk and the three emulators), every probe included. The
// figure is the median of at least 10 runs; the goal is under a second.
func BenchmarkValidate(b *testing.B) {
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			k.start()
			emulator.Require(b, k.err)
			raw := k.newURL(b)
			runs := max(b.N, 10)
			took := make([]time.Duration, 0, runs)
			b.ResetTimer()
			for range runs {
				start := time.Now()
				rep, err := validate.Run(context.Background(), raw, validate.Options{})
				took = append(took, time.Since(start))
				if err != nil || !rep.OK {
					b.Fatalf("run failed: %v\n%s", err, dumpB(rep))
				}
			}
			b.StopTimer()
			var total time.Duration
			for _, d := range took {
				total += d
			}
			// Per run, whatever b.N was (at least 10 runs are made).
			b.ReportMetric(float64(total.Nanoseconds())/float64(len(took)), "ns/op")
			slices.Sort(took)
			median := took[len(took)/2]
			if len(took)%2 == 0 {
				median = (took[len(took)/2-1] + took[len(took)/2]) / 2
			}
			benchsum.Record(b, "validate_"+k.name+"_ms", float64(median.Microseconds())/1000, "ms", "<1000")
		})
	}
}

func dumpB(rep *validate.Report) string {
	if rep == nil {
		return ""
	}
	return dump(rep)
}
