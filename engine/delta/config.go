package delta

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Table properties that decide what a stream can still replay
// (Delta's DeltaConfigs), with Delta's defaults.
const (
	ConfigLogRetention         = "delta.logRetentionDuration"
	ConfigDeletedFileRetention = "delta.deletedFileRetentionDuration"
	ConfigCheckpointRetention  = "delta.checkpointRetentionDuration"
	ConfigExpiredLogCleanup    = "delta.enableExpiredLogCleanup"
	ConfigTxnRetention         = "delta.setTransactionRetentionDuration"
	ConfigCheckpointInterval   = "delta.checkpointInterval"

	DefaultLogRetention         = 30 * 24 * time.Hour
	DefaultDeletedFileRetention = 7 * 24 * time.Hour
	DefaultCheckpointRetention  = 2 * 24 * time.Hour
)

// Retention is what a table keeps, from its configuration.
type Retention struct {
	// Log is delta.logRetentionDuration: commits older than this (and
	// older than a newer checkpoint) are removed by log cleanup.
	Log time.Duration `json:"log_retention"`
	// DeletedFiles is delta.deletedFileRetentionDuration: VACUUM deletes
	// tombstoned files older than this.
	DeletedFiles time.Duration `json:"deleted_file_retention"`
	// LogCleanup is delta.enableExpiredLogCleanup (default true).
	LogCleanup bool `json:"log_cleanup"`
	// Txn is delta.setTransactionRetentionDuration (0: txns never expire).
	Txn time.Duration `json:"txn_retention,omitempty"`
}

// RetentionOf reads the retention properties of m (defaults where unset);
// a value Delta would refuse is an error naming the property.
func RetentionOf(m Metadata) (Retention, error) {
	r := Retention{Log: DefaultLogRetention, DeletedFiles: DefaultDeletedFileRetention, LogCleanup: true}
	for key, dst := range map[string]*time.Duration{ConfigLogRetention: &r.Log, ConfigDeletedFileRetention: &r.DeletedFiles, ConfigTxnRetention: &r.Txn} {
		if v, ok := m.Configuration[key]; ok {
			d, err := ParseInterval(v)
			if err != nil {
				return r, fmt.Errorf("table property %s: %w", key, err)
			}
			*dst = d
		}
	}
	if v, ok := m.Configuration[ConfigExpiredLogCleanup]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return r, fmt.Errorf("table property %s: %q is not true or false", ConfigExpiredLogCleanup, v)
		}
		r.LogCleanup = b
	}
	return r, nil
}

var intervalUnits = map[string]time.Duration{
	"week": 7 * 24 * time.Hour, "day": 24 * time.Hour, "hour": time.Hour, "minute": time.Minute,
	"second": time.Second, "millisecond": time.Millisecond, "microsecond": time.Microsecond,
}

// ParseInterval parses a Delta duration property, Spark's calendar
// interval syntax: "interval 1 week", "interval 30 days", "2 hours 30
// minutes" ("interval" optional, units singular or plural, any case).
// Months and years are refused, as Delta does (their length varies).
func ParseInterval(s string) (time.Duration, error) {
	f := strings.Fields(strings.ToLower(s))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return 0, fmt.Errorf("%q is not an interval (want e.g. \"interval 7 days\")", s)
	}
	var total time.Duration
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %q is not a whole number", s, f[i])
		}
		unit := strings.TrimSuffix(f[i+1], "s")
		if unit == "month" || unit == "year" {
			return 0, fmt.Errorf("%q: Delta does not allow months or years in a duration", s)
		}
		u, ok := intervalUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit %q", s, f[i+1])
		}
		if n < 0 || n > math.MaxInt64/int64(u) || total > math.MaxInt64-time.Duration(n)*u {
			return 0, fmt.Errorf("%q is negative or too long", s)
		}
		total += time.Duration(n) * u
	}
	return total, nil
}
