package emulator

import (
	"context"
	"testing"
	"time"
)

// StartTimeout bounds how long Versitygw, FakeGCS and Azurite wait for
// their emulator to start.
const StartTimeout = 2 * time.Minute

// Versitygw starts versitygw for tb (StartVersitygw) within StartTimeout,
// fails or skips tb when it cannot (Require), stops it when tb ends and
// gives the test process only its credentials (SetEnv).
func Versitygw(tb testing.TB) *S3Emulator {
	tb.Helper()
	emu := started(tb, StartVersitygw)
	emu.SetEnv(tb)
	return emu
}

// FakeGCS starts fake-gcs-server for tb (StartFakeGCS) within
// StartTimeout, fails or skips tb when it cannot (Require) and stops it
// when tb ends. The caller points the client at it (STORAGE_EMULATOR_HOST
// set to Host, or to a proxy of it).
func FakeGCS(tb testing.TB) *GCSEmulator {
	tb.Helper()
	return started(tb, StartFakeGCS)
}

// Azurite starts Azurite for tb (StartAzurite) within StartTimeout, fails
// or skips tb when it cannot (Require), stops it when tb ends and gives
// the test process only its shared key (SetEnv).
func Azurite(tb testing.TB) *AzureEmulator {
	tb.Helper()
	emu := started(tb, StartAzurite)
	emu.SetEnv(tb)
	return emu
}

// started runs start within StartTimeout, hands its error to Require and
// stops the emulator when tb ends.
func started[E interface{ Stop() }](tb testing.TB, start func(context.Context) (E, error)) E {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	emu, err := start(ctx)
	Require(tb, err)
	tb.Cleanup(emu.Stop)
	return emu
}
