package gateway

import (
	"strconv"
	"strings"
)

// ContentRangeSize returns the complete length of the object a
// Content-Range header value describes ("bytes 0-9/100": 100), and false
// when the value names none ("bytes 0-9/*", empty, malformed). S3 and Azure
// answer a ranged read with it; the drivers' GetRange take the object's
// Size from it.
func ContentRangeSize(v string) (int64, bool) {
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, false
	}
	rng, total, ok := strings.Cut(rest, "/")
	if !ok || rng == "" || len(total) > 19 {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	if err != nil || n < 0 || total[0] == '+' {
		return 0, false
	}
	return n, true
}
