package lifecycle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"golang.org/x/sync/errgroup"
)

// Keys Archive writes.
const (
	// ManifestKey is the archive's manifest, at the destination.
	ManifestKey = checkpoint.CkgateDir + "/archive-manifest.json"
	// ArchivedKey marks an archived checkpoint root, at the source
	// (FreshStart).
	ArchivedKey = checkpoint.CkgateDir + "/archived.json"
)

var (
	// ErrDestNotEmpty: the archive destination already holds keys (a
	// checkpoint, or an earlier archive). It is gateway.ErrExists.
	ErrDestNotEmpty = fmt.Errorf("archive destination is not empty: %w", gateway.ErrExists)
	// ErrVerify: the copy does not match the source.
	ErrVerify = errors.New("archive verification failed")
	// ErrArchived: the checkpoint root was archived for a fresh start; a
	// query must not resume from it.
	ErrArchived = errors.New("checkpoint archived for a fresh start")
	// ErrNotRegular: the source holds a name that is not a regular file (a
	// FIFO, device or socket on the local disk), which no copy can hold:
	// the archive is refused rather than made without it.
	ErrNotRegular = errors.New("the checkpoint holds a file that is not a regular file")
	// ErrNotArchive: a location without an archive manifest.
	ErrNotArchive = errors.New("not an archive made by ckgate archive")
)

// ArchiveOptions configure Archive.
type ArchiveOptions struct {
	// Source and Dest are the locations, recorded in the manifest and the
	// marker (secrets redacted).
	Source, Dest string
	// FreshStart writes ArchivedKey at the source once the copy is verified.
	FreshStart bool
	// NewRoot, with FreshStart, is where the query runs from now on: it is
	// recorded in the marker. NewStore, when set, is that root; it must be
	// empty (ErrDestNotEmpty otherwise), checked before anything is copied.
	NewRoot  string
	NewStore gateway.Store
	// Principal and Reason are recorded in the marker and the manifest.
	Principal Principal
	Reason    string
	// Concurrency bounds parallel copies (default 8).
	Concurrency int
	// Progress, when set, is called after each key copied (from any
	// goroutine, serialised) with the number done and the total.
	Progress func(done, total int)
	// AllowLiveWriter archives even when a ckgate writer holds its lease
	// (the copy may then miss its latest writes).
	AllowLiveWriter bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Principal is who archives.
type Principal struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// Manifest lists what an archive holds.
type Manifest struct {
	Version   int             `json:"version"`
	Source    string          `json:"source"`
	Dest      string          `json:"dest"`
	QueryID   string          `json:"query_id"`
	Status    string          `json:"status"`
	Created   time.Time       `json:"created"`
	Principal Principal       `json:"principal"`
	Reason    string          `json:"reason,omitempty"`
	Files     int             `json:"files"`
	Bytes     int64           `json:"bytes"`
	Entries   []ManifestEntry `json:"entries"`
}

// ManifestEntry is one archived key.
type ManifestEntry struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ArchivedRecord is the content of ArchivedKey.
type ArchivedRecord struct {
	Version        int       `json:"version"`
	ArchivedTo     string    `json:"archived_to"`
	NewRoot        string    `json:"new_root,omitempty"`
	Time           time.Time `json:"time"`
	Principal      Principal `json:"principal"`
	Reason         string    `json:"reason"`
	QueryID        string    `json:"query_id"`
	ManifestSHA256 string    `json:"manifest_sha256"`
	Files          int       `json:"files"`
	Bytes          int64     `json:"bytes"`
	Note           string    `json:"note"`
}

// ArchiveResult is what Archive did.
type ArchiveResult struct {
	Manifest       Manifest
	ManifestSHA256 string
	// ManifestWritten is false when the source held a manifest already (it
	// is an archive): that one was copied and kept.
	ManifestWritten bool
	Duration        time.Duration
	// Marker is the record written at the source (FreshStart), else nil.
	Marker *ArchivedRecord
}

// Archive copies the checkpoint at src to dst (see the package
// documentation): every key, create-only, then verified by re-listing dst
// and comparing sizes and SHA-256; then the manifest; then, with
// FreshStart, the marker at src. A dst holding any key is ErrDestNotEmpty;
// a src without a checkpoint is checkpoint.ErrNotCheckpoint; a live ckgate
// writer is gateway.ErrInUse unless AllowLiveWriter; a second fresh start of
// the same root is gateway.ErrExists (the marker is create-only).
func Archive(ctx context.Context, src, dst gateway.Store, opts ArchiveOptions) (*ArchiveResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.FreshStart && opts.Reason == "" {
		return nil, errors.New("a fresh start needs a reason")
	}
	start := time.Now()
	rep, err := checkpoint.Inspect(ctx, src, checkpoint.Options{MaxBatches: -1, MaxStateVersions: -1, Now: opts.Now})
	if err != nil {
		return nil, err
	}
	if rep.Writer.Live && !opts.AllowLiveWriter {
		return nil, fmt.Errorf("archive: writer %s holds the checkpoint (epoch %d): stop the query first: %w",
			rep.Writer.Owner, rep.Writer.Epoch, gateway.ErrInUse)
	}
	if opts.FreshStart {
		if _, err := src.Stat(ctx, ArchivedKey); err == nil {
			return nil, fmt.Errorf("%s: the checkpoint was already archived for a fresh start: %w", ArchivedKey, gateway.ErrExists)
		} else if !errors.Is(err, gateway.ErrNotFound) {
			return nil, err
		}
	}
	for a, err := range dst.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("list destination: %w", err)
		}
		return nil, fmt.Errorf("%w (it holds %s)", ErrDestNotEmpty, a.Key)
	}
	if opts.FreshStart && opts.NewStore != nil {
		for a, err := range opts.NewStore.List(ctx, "") {
			if errors.Is(err, gateway.ErrNotFound) {
				break // a root not made yet is empty
			}
			if err != nil {
				return nil, fmt.Errorf("list the new root: %w", err)
			}
			return nil, fmt.Errorf("the new root %s holds %s: a fresh start needs an empty root: %w", gateway.Redact(opts.NewRoot), a.Key, gateway.ErrExists)
		}
	}
	for e, err := range gateway.ListNonRegular(ctx, src, "") {
		if err != nil {
			return nil, fmt.Errorf("list source: %w", err)
		}
		return nil, fmt.Errorf("archive: %w: %q is %s, not a regular file: an archive must hold every file of the checkpoint, and this one cannot be copied",
			ErrNotRegular, e.Key, gateway.FileType(e.Mode))
	}
	var keys []gateway.Attrs
	for a, err := range src.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("list source: %w", err)
		}
		keys = append(keys, a)
	}
	entries := make([]ManifestEntry, len(keys))
	var mu sync.Mutex
	copied := 0
	if err := parallel(ctx, opts.Concurrency, len(keys), func(ctx context.Context, i int) error {
		e, err := copyKey(ctx, src, dst, keys[i], "")
		entries[i] = e
		if err == nil && opts.Progress != nil {
			mu.Lock()
			copied++
			opts.Progress(copied, len(keys))
			mu.Unlock()
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("archive copy: %w", err)
	}
	if err := Verify(ctx, dst, entries, opts.Concurrency); err != nil {
		return nil, err
	}
	m := Manifest{Version: 1, Source: gateway.Redact(opts.Source), Dest: gateway.Redact(opts.Dest), QueryID: rep.QueryID,
		Status: string(rep.Status), Created: opts.Now().UTC(), Principal: opts.Principal, Reason: opts.Reason,
		Files: len(entries), Entries: entries}
	for _, e := range entries {
		m.Bytes += e.Size
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	// The source may itself be an archive (a restore, or a copy of a copy):
	// its manifest was copied byte for byte like every key and is kept.
	written := !slices.ContainsFunc(entries, func(e ManifestEntry) bool { return e.Key == ManifestKey })
	if written {
		if _, err := dst.Put(ctx, ManifestKey, data, gateway.IfAbsent()); err != nil {
			return nil, fmt.Errorf("write manifest: %w", err)
		}
	}
	sum := sha256.Sum256(data)
	res := &ArchiveResult{Manifest: m, ManifestSHA256: hex.EncodeToString(sum[:]), ManifestWritten: written}
	if opts.FreshStart {
		rec := ArchivedRecord{Version: 1, ArchivedTo: m.Dest, NewRoot: gateway.Redact(opts.NewRoot), Time: opts.Now().UTC(), Principal: opts.Principal, Reason: opts.Reason,
			QueryID: rep.QueryID, ManifestSHA256: res.ManifestSHA256, Files: m.Files, Bytes: m.Bytes,
			Note: "archived for a fresh start: this root is kept as it was; run the query on a new checkpoint root"}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return nil, err
		}
		if _, err := src.Put(ctx, ArchivedKey, append(b, '\n'), gateway.IfAbsent()); err != nil {
			return nil, fmt.Errorf("write %s: %w", ArchivedKey, err)
		}
		res.Marker = &rec
	}
	res.Duration = time.Since(start)
	return res, nil
}

// StreamThreshold is the size above which Archive streams an object
// (GetStream to PutStream) rather than reading it whole.
const StreamThreshold = 8 << 20

// copyKey copies one key byte for byte (create-only) and returns its size
// and digest as read from the source. With want (a SHA-256 in hex), a key
// read whole whose digest differs is refused before it is written
// (ErrVerify); a streamed one is written, and its entry tells.
func copyKey(ctx context.Context, src, dst gateway.Store, a gateway.Attrs, want string) (ManifestEntry, error) {
	key := a.Key
	if a.Size > StreamThreshold {
		rc, _, err := src.GetStream(ctx, key)
		if err != nil {
			return ManifestEntry{}, fmt.Errorf("read %s: %w", key, err)
		}
		defer rc.Close()
		h := sha256.New()
		n := &gateway.CountingReader{R: io.TeeReader(rc, h)}
		_, err = dst.PutStream(ctx, key, n, gateway.IfAbsent())
		if err == nil {
			return ManifestEntry{Key: key, Size: n.N, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
		}
		if !errors.Is(err, gateway.ErrUnsupported) || n.N > 0 {
			return ManifestEntry{}, fmt.Errorf("write %s: %w", key, err)
		}
		// The destination cannot stream: copy it whole.
	}
	// Listed as small: a key that grew since is refused, not read whole.
	data, _, err := gateway.GetBounded(ctx, src, key, max(a.Size, StreamThreshold))
	if err != nil {
		return ManifestEntry{}, fmt.Errorf("read %s: %w", key, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); want != "" && got != want {
		return ManifestEntry{}, fmt.Errorf("%w: %s: SHA-256 %s, the manifest says %s: it is not written", ErrVerify, key, got, want)
	}
	if _, err := dst.Put(ctx, key, data, gateway.IfAbsent()); err != nil {
		return ManifestEntry{}, fmt.Errorf("write %s: %w", key, err)
	}
	return ManifestEntry{Key: key, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, nil
}

// digest streams key from st and returns its SHA-256.
func digest(ctx context.Context, st gateway.Store, key string) (string, error) {
	rc, _, err := st.GetStream(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Verify re-lists dst and checks that it holds exactly the entries (plus
// the manifest, once written) with their sizes, and re-reads each one to
// compare its SHA-256 (Compare). A difference is ErrVerify naming the key.
func Verify(ctx context.Context, dst gateway.Store, entries []ManifestEntry, concurrency int) error {
	bad, err := Compare(ctx, dst, entries, func(k string) bool { return k == ManifestKey }, concurrency)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if len(bad) > 0 {
		return mismatchError("the copy differs from the source", bad)
	}
	return nil
}

// MaxManifestBytes bounds an archive manifest (about a million keys).
const MaxManifestBytes = 256 << 20

// ReadManifest reads and checks an archive's manifest. It lists every key
// of the archive, so it may legitimately be larger than the bound on small
// checkpoint files: it is decoded as it streams, not read whole first, up
// to MaxManifestBytes. No manifest is ErrNotArchive; one that does not
// decode, or lists a key twice, a key that is not a valid store key, a
// negative size or a digest that is not a SHA-256, is checkpoint.ErrCorrupt
// naming ManifestKey and the entry.
func ReadManifest(ctx context.Context, st gateway.Store) (*Manifest, error) {
	rc, _, err := st.GetStream(ctx, ManifestKey)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, fmt.Errorf("%w (no %s): %w", ErrNotArchive, ManifestKey, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ManifestKey, err)
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: MaxManifestBytes + 1}
	var m Manifest
	if err := json.NewDecoder(lr).Decode(&m); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("%s: %w: more than %d bytes", ManifestKey, checkpoint.ErrCorrupt, MaxManifestBytes)
		}
		return nil, fmt.Errorf("%s: %w: %w", ManifestKey, checkpoint.ErrCorrupt, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", ManifestKey, checkpoint.ErrCorrupt, err)
	}
	return &m, nil
}

// check refuses a manifest whose entries cannot describe an archive.
func (m *Manifest) check() error {
	if m.Version != 1 {
		return fmt.Errorf("version %d: want 1", m.Version)
	}
	seen := make(map[string]bool, len(m.Entries))
	for i, e := range m.Entries {
		if err := gateway.ValidateKey("manifest", e.Key); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if seen[e.Key] {
			return fmt.Errorf("entry %d: %q listed twice", i, e.Key)
		}
		seen[e.Key] = true
		if e.Size < 0 {
			return fmt.Errorf("entry %d (%s): size %d", i, e.Key, e.Size)
		}
		if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("entry %d (%s): %q is not a SHA-256 in hex", i, e.Key, e.SHA256)
		}
	}
	return nil
}

// CheckNotArchived returns an error wrapping ErrArchived (with the marker)
// when st's root was archived for a fresh start: a query must then run on
// a new checkpoint root. Callers that open a checkpoint to resume it
// (ckgate run) use it to refuse an archived root. A root that a restore
// began and did not complete is refused too (ErrRestoreIncomplete, no
// record): it is not a whole checkpoint.
func CheckNotArchived(ctx context.Context, st gateway.Store) (*ArchivedRecord, error) {
	data, _, err := gateway.GetBounded(ctx, st, ArchivedKey, 0)
	if errors.Is(err, gateway.ErrNotFound) {
		return nil, checkRestored(ctx, st)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ArchivedKey, err)
	}
	var rec ArchivedRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", ArchivedKey, checkpoint.ErrCorrupt, err)
	}
	return &rec, fmt.Errorf("%w to %s at %s by %s (%s): run the query on a new checkpoint root",
		ErrArchived, rec.ArchivedTo, rec.Time.Format(time.RFC3339), rec.Principal.ID, rec.Reason)
}

// parallel runs f for 0..n-1, at most k at a time; the first error cancels
// the rest and is returned.
func parallel(ctx context.Context, k, n int, f func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(k)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return f(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
