package backendtest

import (
	"errors"
	"strings"
	"testing"
)

// WantErrorSays fails t unless err is of kind (errors.Is) and its message
// says every one of says: a backend's refusal names the bucket, the call
// and the provider's answer.
func WantErrorSays(t testing.TB, err, kind error, says ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want %v", err, kind)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}
