package validate

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ckgate/ckgate/gateway"
)

// PreflightPrefix is the only key prefix validate-access writes under.
const PreflightPrefix = "_ckgate/preflight/"

// MetadataKey is the checkpoint's metadata file (Spark's layout), read if
// present.
const MetadataKey = "metadata"

// probeKeys are the keys one run may write: key for PUT, compare-and-swap,
// GET and DELETE; createKey for the create-only probe. Both start with
// PreflightPrefix and a run id unique to the run.
type probeKeys struct {
	run       string
	key       string
	createKey string
}

func newProbeKeys(now time.Time) probeKeys {
	id := now.UTC().Format("20060102T150405Z") + "-" + strings.ToLower(rand.Text()[:10])
	return probeKeys{run: id, key: PreflightPrefix + id, createKey: PreflightPrefix + id + ".create"}
}

// opsState is shared by the authorization probes of one run. Probes that
// read a field run after the probe that wrote it (a need or an after
// edge), so the graph orders every access; the mutex guards written.
type opsState struct {
	st   gateway.Store
	keys probeKeys

	lastData    []byte
	lastVersion gateway.Version
	firstVer    gateway.Version
	// lost holds what later writes of key sent whose outcome is unknown
	// (the answer lost, the retries spent): the store may hold any of
	// them instead of lastData.
	lost [][]byte

	mu      sync.Mutex
	written map[string]bool // keys that may exist and must be removed
	seq     int
}

func (o *opsState) mayExist(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.written[key] = true
}

func (o *opsState) data(what string) []byte {
	o.mu.Lock()
	o.seq++
	n := o.seq
	o.mu.Unlock()
	return fmt.Appendf(nil, `{"ckgate":"validate-access","run":%q,"write":%d,"what":%q}`+"\n", o.keys.run, n, what)
}

// put writes and records that key may now exist, unless the store
// refused the write outright (then nothing was written).
func (o *opsState) put(ctx context.Context, key string, data []byte, c gateway.Cond) (gateway.Version, error) {
	v, err := o.st.Put(ctx, key, data, c)
	if err == nil || !refused(err) {
		o.mayExist(key)
		if err != nil && key == o.keys.key {
			o.lost = append(o.lost, data)
		}
	}
	return v, err
}

// refused reports errors after which the write surely did not happen.
func refused(err error) bool {
	for _, k := range []error{gateway.ErrPermission, gateway.ErrExists, gateway.ErrPrecondition,
		gateway.ErrUnsupported, gateway.ErrInvalidKey, gateway.ErrDenied, gateway.ErrNotFound} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func (o *opsState) list(ctx context.Context) outcome {
	n := 0
	for _, err := range o.st.List(ctx, "") {
		if err != nil {
			return failErr("", err)
		}
		n++
		break // the first page proves the permission
	}
	if n == 0 {
		return passf("listed the root: no keys yet")
	}
	return passf("listed the root")
}

func (o *opsState) getMetadata(ctx context.Context) outcome {
	b, v, err := gateway.GetBounded(ctx, o.st, MetadataKey, 0)
	switch {
	case errors.Is(err, gateway.ErrNotFound):
		return passf("no " + MetadataKey + " yet (a new checkpoint)")
	case err != nil:
		return failErr("", err)
	}
	return passf(fmt.Sprintf("read %s (%d bytes, version %s)", MetadataKey, len(b), v))
}

func (o *opsState) putPlain(ctx context.Context) outcome {
	d := o.data("put")
	v, err := o.put(ctx, o.keys.key, d, gateway.None())
	if err != nil {
		return failErr("", err)
	}
	o.firstVer, o.lastVersion, o.lastData = v, v, d
	return passf(fmt.Sprintf("wrote %s (version %s)", o.keys.key, v))
}

// putIfAbsent: the first create-only write of a fresh key must succeed,
// a second one must be refused with ErrExists. A store that accepts the
// second silently overwrites, which breaks every create-only log entry.
func (o *opsState) putIfAbsent(ctx context.Context) outcome {
	k := o.keys.createKey
	if _, err := o.put(ctx, k, o.data("create"), gateway.IfAbsent()); err != nil {
		if errors.Is(err, gateway.ErrUnsupported) {
			return failErr("the store cannot do create-only writes", err)
		}
		return failErr("", err)
	}
	_, err := o.put(ctx, k, o.data("create again"), gateway.IfAbsent())
	switch {
	case err == nil:
		return outcome{status: Fail, code: "OVERWRITTEN",
			message: "a second create-only write of " + k + " was accepted: the store silently overwrites, so create-only log entries are not safe"}
	case errors.Is(err, gateway.ErrExists):
		return passf("first create accepted, second refused (" + refusal(err) + ")")
	}
	return failErr("the second create-only write failed instead of being refused", err)
}

// putIfMatch: a compare-and-swap with the current version must succeed,
// one with a replaced (stale) version must be refused.
func (o *opsState) putIfMatch(ctx context.Context) outcome {
	k := o.keys.key
	d := o.data("cas fresh")
	v2, err := o.put(ctx, k, d, gateway.IfMatch(o.firstVer))
	if err != nil {
		if errors.Is(err, gateway.ErrPrecondition) {
			return failErr("a compare-and-swap with the current version was refused", err)
		}
		return failErr("", err)
	}
	o.lastVersion, o.lastData = v2, d
	_, err = o.put(ctx, k, o.data("cas stale"), gateway.IfMatch(o.firstVer))
	switch {
	case err == nil:
		// The stale write replaced the object: read what is there now.
		o.lastVersion, o.lastData = "", nil
		return outcome{status: Fail, code: "STALE_ACCEPTED",
			message: "a compare-and-swap with a stale version was accepted: the store does not honour If-Match, so a fenced writer could overwrite"}
	case errors.Is(err, gateway.ErrPrecondition):
		return passf("fresh version accepted, stale refused (" + refusal(err) + ")")
	}
	return failErr("the stale compare-and-swap failed instead of being refused", err)
}

// refusal names the provider's refusal: "412 PreconditionFailed".
func refusal(err error) string {
	info := inspect(err)
	var parts []string
	if info.status != 0 {
		parts = append(parts, fmt.Sprint(info.status))
	}
	if info.code != "" {
		parts = append(parts, info.code)
	}
	if len(parts) == 0 {
		return info.kind
	}
	return strings.Join(parts, " ")
}

func (o *opsState) getAfterWrite(ctx context.Context) outcome {
	b, v, err := gateway.GetBounded(ctx, o.st, o.keys.key, 0)
	// A body cut on the way (a connection that closed early, which a
	// response without a length or checksum does not show) reads as a
	// strict prefix of what was written: read again, twice at most,
	// before calling the store stale.
	for try := 0; err == nil && try < 2 && o.cutShort(b); try++ {
		b, v, err = gateway.GetBounded(ctx, o.st, o.keys.key, 0)
	}
	if err != nil {
		return failErr("", err)
	}
	switch {
	case o.lastData == nil:
		return passf(fmt.Sprintf("read %d bytes back", len(b)))
	case bytes.Equal(b, o.lastData) && v != o.lastVersion:
		return outcome{status: Fail, code: "VERSION_MISMATCH",
			message: fmt.Sprintf("read back version %s, the write returned %s: compare-and-swap could never match", v, o.lastVersion)}
	case bytes.Equal(b, o.lastData):
		return passf("read back the last write and its version")
	case slices.ContainsFunc(o.lost, func(d []byte) bool { return bytes.Equal(b, d) }):
		// A write whose answer was lost did land: its version was never
		// returned, so there is none to compare.
		return passf("read back a later write whose answer was lost on the way (it landed)")
	}
	return outcome{status: Fail, code: "STALE_READ", message: "read back different bytes than the last write (stale or cached read)"}
}

// cutShort reports whether b is a strict prefix of a write the store may
// hold: a read whose body was cut on the way.
func (o *opsState) cutShort(b []byte) bool {
	for _, d := range append([][]byte{o.lastData}, o.lost...) {
		if d != nil && len(b) < len(d) && bytes.HasPrefix(d, b) {
			return true
		}
	}
	return false
}

func (o *opsState) delete(ctx context.Context) outcome {
	gone := ""
	switch err := o.st.Delete(ctx, o.keys.key, gateway.None()); {
	case errors.Is(err, gateway.ErrNotFound):
		// The probe was written and read back: not found is a retried
		// delete whose first attempt removed it (its answer lost on the
		// way). A principal that may not delete is refused before the
		// store looks for the key, so the permission holds.
		gone = " (the store answered not found: a retried delete whose first attempt removed it)"
	case err != nil:
		return failErr("", err)
	}
	o.mu.Lock()
	delete(o.written, o.keys.key)
	o.mu.Unlock()
	return passf("deleted " + o.keys.key + gone)
}

// cleanup removes every probe key that may exist, with its own deadline:
// it runs after a failure, a timeout or an interruption too.
func (o *opsState) cleanup(ctx context.Context) outcome {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	o.mu.Lock()
	var keys []string
	for _, k := range []string{o.keys.key, o.keys.createKey} {
		if o.written[k] {
			keys = append(keys, k)
		}
	}
	o.mu.Unlock()
	if len(keys) == 0 {
		return passf("nothing to remove")
	}
	var left []string
	var firstErr error
	for _, k := range keys {
		if err := removeProbeKey(ctx, o.st, k); err != nil {
			left = append(left, k)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if len(left) > 0 {
		return failErr("could not remove "+strings.Join(left, ", ")+"; remove it with a principal that may delete", firstErr)
	}
	return passf("removed " + strings.Join(keys, ", "))
}

const cleanupTimeout = 30 * time.Second
