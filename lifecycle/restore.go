package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
)

// Keys Restore writes at its destination.
const (
	// RestoreKey is written first: a restore of this archive began here.
	RestoreKey = checkpoint.RestoreKey
	// RestoredKey is written last: every file is in place and verified.
	RestoredKey = checkpoint.RestoredKey
)

// ErrRestoreIncomplete: a restore into the root began (RestoreKey) and did
// not finish (no RestoredKey): the root is not a whole checkpoint. Running
// the same restore again completes it.
var ErrRestoreIncomplete = errors.New("a restore into this root did not complete")

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// Archive and Dest are the locations, recorded in the markers (secrets
	// redacted).
	Archive, Dest string
	Principal     Principal
	// Concurrency bounds parallel copies and reads (default 8).
	Concurrency int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MakeRoot, when set, makes dst's root (a local directory) once the
	// archive is verified and dst found empty, before the first write.
	MakeRoot func(context.Context) error
}

// RestoreRecord is the content of RestoreKey and RestoredKey.
type RestoreRecord struct {
	Version        int       `json:"version"`
	Archive        string    `json:"archive"`
	Dest           string    `json:"dest"`
	ManifestSHA256 string    `json:"manifest_sha256"`
	QueryID        string    `json:"query_id"`
	Files          int       `json:"files"`
	Bytes          int64     `json:"bytes"`
	Time           time.Time `json:"time"`
	Principal      Principal `json:"principal"`
	Note           string    `json:"note"`
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	Manifest       Manifest
	ManifestSHA256 string
	// Copied keys were written now; Kept ones were in place already, from
	// an earlier run of the same restore that did not complete.
	Copied, Kept int
	Duration     time.Duration
}

// VerifyError is an archive or restore whose files differ from the
// manifest. It is ErrVerify.
type VerifyError struct {
	What       string
	Mismatches []Mismatch
}

func (e *VerifyError) Error() string { return mismatchError(e.What, e.Mismatches).Error() }
func (e *VerifyError) Unwrap() error { return ErrVerify }

// Restore copies the archive at arc (made by Archive) into dst, create-only:
//
//  1. the archive is verified against its manifest (every key's size and
//     SHA-256, no key missing or extra): a difference is a *VerifyError and
//     nothing is written;
//  2. dst must be empty (gateway.ErrExists naming a key it holds), or hold a
//     restore of this same archive that did not complete: its files are
//     checked against the manifest and the rest is copied;
//  3. RestoreKey is written, then every file but metadata (each read whole
//     is checked against the manifest before it is written), then dst is
//     re-listed and re-read against the manifest, then metadata, then
//     RestoredKey.
//
// A restore that stops part-way leaves RestoreKey without RestoredKey and
// no metadata: CheckNotArchived refuses to run on it, and the same restore
// run again completes it. The archive's own manifest and any restore
// markers it holds are not copied.
func Restore(ctx context.Context, arc, dst gateway.Store, opts RestoreOptions) (*RestoreResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	start := time.Now()
	m, bad, err := VerifyArchive(ctx, arc, opts.Concurrency)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, &VerifyError{What: "the archive differs from its manifest, nothing was restored", Mismatches: bad}
	}
	msum, err := digest(ctx, arc, ManifestKey)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ManifestKey, err)
	}
	var entries []ManifestEntry
	var meta *ManifestEntry
	for _, e := range m.Entries {
		switch e.Key {
		case ManifestKey, RestoreKey, RestoredKey:
		case checkpoint.MetadataKey:
			meta = &e
		default:
			entries = append(entries, e)
		}
	}
	rec := RestoreRecord{Version: 1, Archive: gateway.Redact(opts.Archive), Dest: gateway.Redact(opts.Dest), ManifestSHA256: msum,
		QueryID: m.QueryID, Files: m.Files, Bytes: m.Bytes, Principal: opts.Principal}
	have, err := restoreState(ctx, dst, msum, entries, meta, opts.Concurrency)
	if err != nil {
		return nil, err
	}
	// metadata is written last; a policy that refuses it (a root inside
	// another checkpoint's tree) refuses the restore before its first write.
	if meta != nil {
		if err := gateway.Decide(ctx, dst, gateway.Call{Op: gateway.OpPut, Key: meta.Key, Cond: gateway.IfAbsent(), Size: meta.Size}); err != nil {
			return nil, fmt.Errorf("restore into %s: %w", gateway.Redact(opts.Dest), err)
		}
	}
	if have == nil && opts.MakeRoot != nil {
		if err := opts.MakeRoot(ctx); err != nil {
			return nil, fmt.Errorf("make %s: %w", gateway.Redact(opts.Dest), err)
		}
	}
	if have == nil {
		rec.Time = opts.Now().UTC()
		rec.Note = "a restore began here: until " + RestoredKey + " exists this root is not a whole checkpoint; run the same ckgate restore again to complete it"
		if err := putRecord(ctx, dst, RestoreKey, rec); err != nil {
			return nil, err
		}
		have = map[string]bool{}
	}
	var todo []ManifestEntry
	for _, e := range entries {
		if !have[e.Key] {
			todo = append(todo, e)
		}
	}
	incomplete := func(err error) error {
		return fmt.Errorf("%w: %s (%s is in place, %s and %s are not): %w", ErrRestoreIncomplete, gateway.Redact(opts.Dest), RestoreKey, checkpoint.MetadataKey, RestoredKey, err)
	}
	if err := parallel(ctx, opts.Concurrency, len(todo), func(ctx context.Context, i int) error {
		return restoreKey(ctx, arc, dst, todo[i])
	}); err != nil {
		return nil, incomplete(err)
	}
	skip := func(k string) bool { return k == RestoreKey || (meta != nil && k == meta.Key) }
	if bad, err := Compare(ctx, dst, entries, skip, opts.Concurrency); err != nil {
		return nil, incomplete(fmt.Errorf("destination: %w", err))
	} else if len(bad) > 0 {
		return nil, incomplete(&VerifyError{What: "the restored copy differs from the manifest", Mismatches: bad})
	}
	if meta != nil {
		if err := restoreKey(ctx, arc, dst, *meta); err != nil {
			return nil, incomplete(err)
		}
	}
	rec.Time = opts.Now().UTC()
	rec.Note = "restored and verified (size and SHA-256 of every file against the archive's manifest)"
	if err := putRecord(ctx, dst, RestoredKey, rec); err != nil {
		return nil, incomplete(err)
	}
	n := len(todo)
	if meta != nil {
		n++
	}
	return &RestoreResult{Manifest: *m, ManifestSHA256: msum, Copied: n, Kept: len(entries) - len(todo), Duration: time.Since(start)}, nil
}

// restoreState reads dst: nil for an empty root; for a restore of the same
// archive (RestoreKey naming manifest digest msum) that did not complete,
// the keys already in place and checked against the manifest; otherwise an
// error naming what dst holds.
func restoreState(ctx context.Context, dst gateway.Store, msum string, entries []ManifestEntry, meta *ManifestEntry, k int) (map[string]bool, error) {
	var first string
	for a, err := range dst.List(ctx, "") {
		if errors.Is(err, gateway.ErrNotFound) {
			break // a root not made yet is empty
		}
		if err != nil {
			return nil, fmt.Errorf("list destination: %w", err)
		}
		first = a.Key
		break
	}
	if first == "" {
		return nil, nil
	}
	data, _, err := gateway.GetBounded(ctx, dst, RestoreKey, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, fmt.Errorf("restore destination is not empty (it holds %s): a restore writes only into an empty root: %w", first, gateway.ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", RestoreKey, err)
	}
	var began RestoreRecord
	if err := json.Unmarshal(data, &began); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", RestoreKey, checkpoint.ErrCorrupt, err)
	}
	if began.ManifestSHA256 != msum {
		return nil, fmt.Errorf("restore destination holds a restore of another archive (%s, manifest sha256 %s): %w", began.Archive, began.ManifestSHA256, gateway.ErrExists)
	}
	if _, err := dst.Stat(ctx, RestoredKey); err == nil {
		return nil, fmt.Errorf("this archive was restored here already (%s): %w", RestoredKey, gateway.ErrExists)
	} else if !errors.Is(err, gateway.ErrNotFound) {
		return nil, fmt.Errorf("stat %s: %w", RestoredKey, err)
	}
	skip := func(k string) bool { return k == RestoreKey }
	all := entries
	if meta != nil {
		all = append(append([]ManifestEntry{}, entries...), *meta)
	}
	bad, err := Compare(ctx, dst, all, skip, k)
	if err != nil {
		return nil, fmt.Errorf("destination: %w", err)
	}
	missing := map[string]bool{}
	var wrong []Mismatch
	for _, b := range bad {
		if b.Problem == Missing {
			missing[b.Key] = true
		} else {
			wrong = append(wrong, b)
		}
	}
	if len(wrong) > 0 {
		return nil, fmt.Errorf("restore destination: %w: %w", &VerifyError{What: "the unfinished restore there holds files the archive does not", Mismatches: wrong}, gateway.ErrExists)
	}
	have := map[string]bool{}
	for _, e := range all {
		if !missing[e.Key] {
			have[e.Key] = true
		}
	}
	return have, nil
}

// restoreKey copies e from the archive, checked against its digest.
func restoreKey(ctx context.Context, arc, dst gateway.Store, e ManifestEntry) error {
	got, err := copyKey(ctx, arc, dst, gateway.Attrs{Key: e.Key, Size: e.Size}, e.SHA256)
	if err != nil {
		return err
	}
	if got.SHA256 != e.SHA256 || got.Size != e.Size {
		return &VerifyError{What: "a file changed in the archive while it was restored", Mismatches: []Mismatch{{Key: e.Key, Problem: HashDiff, Want: e.SHA256, Got: got.SHA256}}}
	}
	return nil
}

func putRecord(ctx context.Context, st gateway.Store, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if _, err := st.Put(ctx, key, append(b, '\n'), gateway.IfAbsent()); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// checkRestored returns ErrRestoreIncomplete when a restore into st began
// and did not complete.
func checkRestored(ctx context.Context, st gateway.Store) error {
	if _, err := st.Stat(ctx, RestoreKey); errors.Is(err, gateway.ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("stat %s: %w", RestoreKey, err)
	}
	if _, err := st.Stat(ctx, RestoredKey); errors.Is(err, gateway.ErrNotFound) {
		return fmt.Errorf("%w (%s without %s): run the same ckgate restore ARCHIVE DEST again to complete it", ErrRestoreIncomplete, RestoreKey, RestoredKey)
	} else if err != nil {
		return fmt.Errorf("stat %s: %w", RestoredKey, err)
	}
	return nil
}
