package emulator

import (
	"context"
	"testing"
	"time"
)

// RunTests is a TestMain's work for a package whose tests share one
// emulator: it starts it with start (given two minutes), stores it and
// start's error in *emu and *err, runs m's tests, stops it and returns
// m.Run's code for TestMain to exit with. The tests pass *err to Require,
// which skips them, or fails them when CI is set, if the emulator did not
// start.
func RunTests[E interface{ Stop() }](m *testing.M, start func(context.Context) (E, error), emu *E, err *error) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	*emu, *err = start(ctx)
	cancel()
	defer (*emu).Stop()
	return m.Run()
}
