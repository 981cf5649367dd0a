package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ckgate/ckgate/gateway"
)

// Problems a Mismatch reports.
const (
	Missing  = "missing"    // in the manifest, not in the store
	Extra    = "extra"      // in the store, not in the manifest
	SizeDiff = "size"       // the size differs from the manifest's
	HashDiff = "sha256"     // the SHA-256 differs from the manifest's
	Unread   = "unreadable" // listed, but could not be read back
)

// Mismatch is one key whose copy differs from what a manifest says.
type Mismatch struct {
	Key     string `json:"key"`
	Problem string `json:"problem"`
	Want    string `json:"want,omitempty"`
	Got     string `json:"got,omitempty"`
}

func (m Mismatch) String() string {
	switch m.Problem {
	case Missing:
		return m.Key + ": missing (the manifest lists it)"
	case Extra:
		return m.Key + ": not in the manifest"
	case SizeDiff:
		return fmt.Sprintf("%s: %s bytes, the manifest says %s", m.Key, m.Got, m.Want)
	case HashDiff:
		return fmt.Sprintf("%s: SHA-256 %s, the manifest says %s", m.Key, m.Got, m.Want)
	default:
		return fmt.Sprintf("%s: %s: %s", m.Key, m.Problem, m.Got)
	}
}

// Compare lists st and checks that it holds exactly entries, each with its
// size and SHA-256 (every key is re-read whole, streaming); a key for which
// skip returns true is neither required nor extra. It returns every
// mismatch, sorted by key; the error is for a store that cannot be listed.
// A key that lists but cannot be read is a mismatch (Unread), not an error.
func Compare(ctx context.Context, st gateway.Store, entries []ManifestEntry, skip func(string) bool, concurrency int) ([]Mismatch, error) {
	if concurrency <= 0 {
		concurrency = 8
	}
	if skip == nil {
		skip = func(string) bool { return false }
	}
	want := make(map[string]ManifestEntry, len(entries))
	for _, e := range entries {
		want[e.Key] = e
	}
	var out []Mismatch
	var same []ManifestEntry
	seen := map[string]bool{}
	for a, err := range st.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		e, ok := want[a.Key]
		switch {
		case !ok && skip(a.Key):
			continue
		case !ok:
			out = append(out, Mismatch{Key: a.Key, Problem: Extra, Got: fmt.Sprint(a.Size)})
		case a.Size != e.Size:
			out = append(out, Mismatch{Key: a.Key, Problem: SizeDiff, Want: fmt.Sprint(e.Size), Got: fmt.Sprint(a.Size)})
		default:
			same = append(same, e)
		}
		seen[a.Key] = true
	}
	for _, e := range entries {
		if !seen[e.Key] && !skip(e.Key) {
			out = append(out, Mismatch{Key: e.Key, Problem: Missing, Want: fmt.Sprint(e.Size)})
		}
	}
	var mu sync.Mutex
	err := parallel(ctx, concurrency, len(same), func(ctx context.Context, i int) error {
		e := same[i]
		sum, err := digest(ctx, st, e.Key)
		var m *Mismatch
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, gateway.ErrNotFound):
			m = &Mismatch{Key: e.Key, Problem: Missing, Want: fmt.Sprint(e.Size)}
		case err != nil:
			m = &Mismatch{Key: e.Key, Problem: Unread, Got: err.Error()}
		case sum != e.SHA256:
			m = &Mismatch{Key: e.Key, Problem: HashDiff, Want: e.SHA256, Got: sum}
		}
		if m != nil {
			mu.Lock()
			out = append(out, *m)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Mismatch) int {
		if a.Key != b.Key {
			if a.Key < b.Key {
				return -1
			}
			return 1
		}
		return 0
	})
	return out, nil
}

// VerifyArchive reads the manifest of the archive st and compares every
// key of st with it (Compare): missing, extra, size and SHA-256. The
// manifest key itself is not an entry of its own manifest.
func VerifyArchive(ctx context.Context, st gateway.Store, concurrency int) (*Manifest, []Mismatch, error) {
	m, err := ReadManifest(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	bad, err := Compare(ctx, st, m.Entries, func(k string) bool { return k == ManifestKey }, concurrency)
	if err != nil {
		return m, nil, fmt.Errorf("archive: %w", err)
	}
	return m, bad, nil
}

// mismatchError is ErrVerify naming the first of ms and how many there are.
func mismatchError(what string, ms []Mismatch) error {
	more := ""
	if len(ms) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(ms)-1)
	}
	return fmt.Errorf("%w: %s: %s%s", ErrVerify, what, ms[0], more)
}
