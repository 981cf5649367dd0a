package gateway_test

import (
	"testing"

	"github.com/ckgate/ckgate/gateway"
)

func TestAllDigits(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "42": true, "00000000000000000007": true, "123456789012345678901234": true,
		"": false, "-1": false, "+1": false, "1.compact": false, "1 ": false, "١": false, "0x1": false,
	} {
		if got := gateway.AllDigits(s); got != want {
			t.Errorf("AllDigits(%q) = %v, want %v", s, got, want)
		}
	}
}
