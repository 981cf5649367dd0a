package azstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/ckgate/ckgate/gateway"
)

var _ gateway.CopyDriver = (*driver)(nil)

// Copy stores src's content under dst with Copy Blob inside the account
// (the request's credential authorises the source), which Azure (and
// Azurite) evaluate with its conditions: x-ms-source-if-match for
// srcVersion, If-None-Match: * for IfAbsent and If-Match for IfMatch on
// dst. An absent or stale source is an error naming src, any other one
// names dst. The copy carries a fresh write id, so a refusal after a retried
// attempt is settled like a refused Put. Inside one account Azure
// completes a copy before it answers, as a rule; one it runs in the
// background (copy status pending, a large blob) is waited for, and dst
// exists, with that status, while it runs.
func (s *driver) Copy(ctx context.Context, src, dst string, srcVersion gateway.Version, c gateway.Cond) (gateway.Version, error) {
	id := newWriteID()
	opts := &blob.StartCopyFromURLOptions{
		Metadata:         map[string]*string{metaWriteID: &id},
		AccessConditions: accessConditions(c),
	}
	if srcVersion != "" {
		opts.SourceModifiedAccessConditions = &blob.SourceModifiedAccessConditions{SourceIfMatch: etagOf(srcVersion)}
	}
	tctx, t := withTries(ctx)
	resp, err := s.blob(dst).StartCopyFromURL(tctx, s.blob(src).URL(), opts)
	if err == nil {
		if deref(resp.CopyStatus) == blob.CopyStatusTypePending {
			return s.awaitCopy(ctx, dst, deref(resp.CopyID))
		}
		return version(resp.ETag), nil
	}
	switch {
	case bloberror.HasCode(err, bloberror.SourceConditionNotMet):
		return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("the source is no longer at %s: %w", srcVersion, cause(err)))
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.CannotVerifyCopySource),
		srcVersion != "" && kindOf(err) == gateway.ErrPrecondition:
		// Either side's: the missing blob is the source's unless it is
		// there (an IfMatch copy onto a missing dst); a 412 (Azurite
		// answers ConditionNotMet for the source too) is the source's
		// when it is at another version.
		p, perr := s.blob(src).GetProperties(ctx, nil)
		switch {
		case blobMissing(perr):
			return "", gateway.E("copy", src, gateway.ErrNotFound, cause(err))
		case perr == nil && srcVersion != "" && version(p.ETag) != version(etagOf(srcVersion)):
			return "", gateway.E("copy", src, gateway.ErrPrecondition, fmt.Errorf("the source is at %s, not %s: %w", version(p.ETag), srcVersion, cause(err)))
		}
	}
	if condKind(c, err) == nil {
		return "", gateway.E("copy", dst, kindOf(err), fmt.Errorf("from %s: %w", src, cause(err)))
	}
	r := gateway.Refused{Op: "copy", Key: dst, Cond: c, Err: cause(err), Retried: t.retried()}
	return r.Settle(ctx, func(ctx context.Context) (gateway.Version, bool, error) {
		p, err := s.blob(dst).GetProperties(ctx, nil)
		if err != nil {
			return "", false, cause(err)
		}
		return version(p.ETag), metaValue(p.Metadata, metaWriteID) == id, nil
	}, blobMissing)
}

// awaitCopy waits for the background copy id onto dst to end, polling its
// properties (from 50ms, doubling, at most 2s apart).
func (s *driver) awaitCopy(ctx context.Context, dst, id string) (gateway.Version, error) {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		p, err := s.blob(dst).GetProperties(ctx, nil)
		if err != nil {
			return "", e("copy", dst, err)
		}
		if deref(p.CopyID) != id {
			return "", gateway.E("copy", dst, gateway.ErrUnknownOutcome,
				fmt.Errorf("another copy or write replaced the copy %s while it ran", id))
		}
		switch deref(p.CopyStatus) {
		case blob.CopyStatusTypeSuccess:
			return version(p.ETag), nil
		case blob.CopyStatusTypePending:
		default:
			return "", gateway.E("copy", dst, gateway.ErrUnavailable,
				fmt.Errorf("the copy ended %s: %s", deref(p.CopyStatus), deref(p.CopyStatusDescription)))
		}
		if err := gateway.Sleep(ctx, wait); err != nil {
			return "", gateway.E("copy", dst, gateway.ErrUnavailable, errors.Join(errors.New("waiting for the copy"), err))
		}
	}
}
