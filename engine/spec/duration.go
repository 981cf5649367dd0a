package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a YAML duration: Go's syntax ("10m", "1h30m", "500ms") plus
// whole days ("2d"); a bare integer is milliseconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Ms returns d in milliseconds.
func (d Duration) Ms() int64 { return time.Duration(d).Milliseconds() }

func (d Duration) String() string { return time.Duration(d).String() }

// ParseDuration parses the syntax of Duration.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		if n > math.MaxInt64/int64(time.Millisecond) {
			return 0, fmt.Errorf("duration %q ms is longer than %s", s, time.Duration(math.MaxInt64))
		}
		return Duration(time.Duration(n) * time.Millisecond), nil
	}
	if rest, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n < 0 || n > 100000 {
			return 0, fmt.Errorf("duration %q: want whole days such as 2d", s)
		}
		return Duration(time.Duration(n) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want e.g. 500ms, 10s, 30m, 1h30m or 2d", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return Duration(d), nil
}

// UnmarshalYAML reads a scalar duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a duration such as 10m")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML writes d in Go's syntax.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }
