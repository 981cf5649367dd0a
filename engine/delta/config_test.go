package delta

import (
	"testing"
	"time"
)

func TestParseInterval(t *testing.T) {
	good := map[string]time.Duration{
		"interval 1 week":             7 * 24 * time.Hour,
		"interval 30 days":            30 * 24 * time.Hour,
		"INTERVAL 2 HOURS 30 minutes": 150 * time.Minute,
		"  7 days ":                   7 * 24 * time.Hour,
		"interval 0 hours":            0,
	}
	for s, want := range good {
		if got, err := ParseInterval(s); err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "interval", "1 month", "interval 1 year", "7", "seven days", "-1 days", "interval 99999999999999 weeks", "1 fortnight"} {
		if d, err := ParseInterval(s); err == nil {
			t.Errorf("ParseInterval(%q) = %v; want an error", s, d)
		}
	}
}

func TestRetentionOf(t *testing.T) {
	r, err := RetentionOf(Metadata{})
	if err != nil || r.Log != DefaultLogRetention || r.DeletedFiles != DefaultDeletedFileRetention || !r.LogCleanup {
		t.Errorf("defaults = %+v, %v", r, err)
	}
	r, err = RetentionOf(Metadata{Configuration: map[string]string{ConfigLogRetention: "interval 2 days", ConfigDeletedFileRetention: "interval 12 hours", ConfigExpiredLogCleanup: "false"}})
	if err != nil || r.Log != 48*time.Hour || r.DeletedFiles != 12*time.Hour || r.LogCleanup {
		t.Errorf("set = %+v, %v", r, err)
	}
	if _, err := RetentionOf(Metadata{Configuration: map[string]string{ConfigDeletedFileRetention: "1 month"}}); err == nil {
		t.Error("a month accepted")
	}
}
